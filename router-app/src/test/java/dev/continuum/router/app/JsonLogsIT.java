package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.testing.FreePorts;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code logging.format: json} in a real run of the shaded jar: every line it writes, from start to a SIGTERM,
 * is one JSON object with an ISO-8601 timestamp, the level, logger, thread and the formatted message, and
 * gRPC's java.util.logging lines (jetcd dialing an etcd that is not there, at trace level) come out the same way.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class JsonLogsIT {
    @TempDir
    Path dir;

    private Process router;

    @AfterEach
    void stop() {
        if (router != null) {
            router.destroyForcibly();
        }
    }

    @Test
    void everyLineOfARunIsOneJsonObjectIncludingTheBridgedGrpcLines() throws Exception {
        int port = FreePorts.next();
        int noEtcd = FreePorts.next();
        Path config = dir.resolve("config.yaml");
        Files.writeString(config, """
                server:
                  bind_address: "127.0.0.1:%d"
                  shutdown_grace_period: 1s
                backends:
                  - {name: main, url: "http://127.0.0.1:9", models: [m]}
                logging: {format: json, level: trace}
                dynamo:
                  enabled: true
                  discovery: {etcd: {endpoints: ["http://127.0.0.1:%d"]}}
                  load: {direct_allow_cidrs: ["127.0.0.0/8"]}
                """.formatted(port, noEtcd));
        Path out = dir.resolve("stdout.log");
        Path err = dir.resolve("stderr.log");
        router = new ProcessBuilder("java", "-jar", System.getProperty("continuum.jar"), "serve",
                "--config", config.toString()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        HttpClient client = HttpClient.newHttpClient();
        URI health = URI.create("http://127.0.0.1:" + port + "/health");
        await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(ConnectException.class)
                .until(() -> client.send(HttpRequest.newBuilder(health).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.readString(out).contains("\"logger\":\"io.grpc."));
        new ProcessBuilder("kill", "-TERM", Long.toString(router.pid())).start().waitFor();
        assertThat(router.waitFor(30, TimeUnit.SECONDS)).isTrue();

        ObjectMapper json = new ObjectMapper();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(out)) {
            JsonNode event = json.readTree(line);
            assertThat(event.isObject()).as(line).isTrue();
            for (String field : List.of("timestamp", "level", "logger", "thread", "message")) {
                assertThat(event.path(field).isTextual()).as(field + " in " + line).isTrue();
            }
            OffsetDateTime.parse(event.get("timestamp").asText());
            lines.add(event);
        }
        assertThat(lines).anySatisfy(e -> assertThat(e.get("message").asText())
                .isEqualTo("config loaded from " + config));
        assertThat(lines).anySatisfy(e -> assertThat(e.get("logger").asText()).startsWith("io.grpc."));
        assertThat(lines).anySatisfy(e -> assertThat(e.get("message").asText()).startsWith("stopped "));
        assertThat(Files.readAllLines(err)).as("nothing bypasses the format on stderr either").isEmpty();
    }
}
