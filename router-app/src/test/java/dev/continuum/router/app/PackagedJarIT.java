package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar, run as a separate process as systemd or a container runs it: it starts from a
 * config file, reloads on a real SIGHUP, and on a real SIGTERM lets an in-flight stream finish.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PackagedJarIT {
    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private TestUpstream upstream;
    private Process router;

    @AfterEach
    void stop() {
        if (router != null) {
            router.destroyForcibly();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    @Test
    void reloadsOnSighupAndDrainsAStreamOnSigterm() throws Exception {
        upstream = TestUpstream.start("packaged").models("m").defaultReply(Reply.controlledStream());
        int port = FreePorts.next();
        Path config = dir.resolve("config.yaml");
        Files.writeString(config, """
                server:
                  bind_address: "127.0.0.1:%d"
                  shutdown_grace_period: 30s
                backends:
                  - name: main
                    url: %s
                    models: [m]
                """.formatted(port, upstream.baseUrl()));
        Path log = dir.resolve("router.log");
        router = new ProcessBuilder("java", "-jar", System.getProperty("continuum.jar"), "serve",
                "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        URI base = URI.create("http://127.0.0.1:" + port);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(ConnectException.class)
                .until(() -> get(base.resolve("/health")).statusCode() == 200);

        new ProcessBuilder("kill", "-HUP", Long.toString(router.pid())).start().waitFor();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(get(base.resolve("/metrics")).body())
                .contains("continuum_config_reloads_total{result=\"unchanged\"} 1.0"));

        CompletableFuture<HttpResponse<String>> stream = client.sendAsync(HttpRequest.newBuilder(
                base.resolve("/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofString());
        StreamHandle events = upstream.awaitStream(Duration.ofSeconds(10));
        events.send("{\"n\":1}");

        router.destroy(); // SIGTERM
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(Files.readString(log)).contains("shutting down"));
        assertThat(router.isAlive()).isTrue();
        events.send("{\"n\":2}");
        events.finish();

        HttpResponse<String> done = stream.get(20, TimeUnit.SECONDS);
        assertThat(done.body()).contains("{\"n\":1}", "{\"n\":2}", "[DONE]");
        assertThat(router.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(log)).contains("stopped").doesNotContain("Exception");
    }

    /**
     * jetcd finds gRPC's name resolvers and transports through META-INF/services: a shaded jar that
     * lost those files starts but never connects. Discovery through the jar proves they are merged.
     */
    @Test
    void discoversAnEtcdFleetFromTheShadedJar() throws Exception {
        EtcdExtension etcd = EtcdExtension.plain();
        etcd.start();
        try {
            int port = FreePorts.next();
            Path config = dir.resolve("dynamo.yaml");
            Files.writeString(config, """
                    server:
                      bind_address: "127.0.0.1:%d"
                    admin:
                      auth: {method: none}
                    dynamo:
                      enabled: true
                      discovery:
                        etcd: {endpoints: ["%s"], namespace: dynamo}
                      load:
                        direct_allow_cidrs: ["127.0.0.0/8"]
                    """.formatted(port, etcd.endpoint()));
            etcd.put(DynamoRecords.endpointKey("dynamo", "backend", "generate", 0xabcdefL),
                    DynamoRecords.endpoint("dynamo", "backend", "generate", 0xabcdefL));
            router = new ProcessBuilder("java", "-jar", System.getProperty("continuum.jar"), "serve",
                    "--config", config.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("dynamo.log").toFile()).start();
            URI workers = URI.create("http://127.0.0.1:" + port + "/admin/dynamo/workers");
            await().atMost(Duration.ofSeconds(40)).ignoreExceptionsInstanceOf(ConnectException.class)
                    .untilAsserted(() -> assertThat(get(workers).body())
                            .contains("\"connected\":true", "\"instance_id\":\"abcdef\""));
        } finally {
            etcd.stop();
        }
    }

    /** README's first command as a user runs it: the demo answers a streamed curl, and SIGTERM stops it all. */
    @Test
    void demoServesAStreamedCompletionAndStopsOnSigterm() throws Exception {
        int port = FreePorts.next();
        Path log = dir.resolve("demo.log");
        router = new ProcessBuilder("java", "-Djava.io.tmpdir=" + dir, "-jar", System.getProperty("continuum.jar"),
                "demo", "--bind", "127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        URI base = URI.create("http://127.0.0.1:" + port);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(Files.readString(log)).contains("Try, from another terminal", base + "/v1/chat/completions"));
        // The router is bound before the fleet's samples are in: pinning works from the first discovery pass.
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                    .header("x-backend", "")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo-model\",\"stream\":true,"
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            assertThat(r.body()).contains("chat.completion.chunk", "data: [DONE]");
        });

        router.destroy(); // SIGTERM
        assertThat(router.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(log)).contains("stopped").doesNotContain("Exception");
        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("continuum-demo-"));
        }
    }

    private HttpResponse<String> get(URI uri) throws Exception {
        return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    }
}
