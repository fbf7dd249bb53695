package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The whole process in one JVM: real config file, real listeners, real upstreams. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RouterProcessTest {
    private static final String TOKEN = "admin-token-7f3a";
    private static final String BACKEND_KEY = "sk-upstream-91c2";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private TestUpstream first;
    private TestUpstream second;
    private RouterProcess router;
    private Path configFile;

    @BeforeEach
    void startUpstreams() {
        first = TestUpstream.start("first").models("m").defaultReply(Reply.echo());
        second = TestUpstream.start("second").models("m").defaultReply(Reply.echo());
    }

    @AfterEach
    void stopEverything() {
        if (router != null) {
            router.close();
        }
        first.close();
        second.close();
    }

    @Test
    void proxiesAndServesHealthMetricsAndAMaskedConfig() throws Exception {
        start(config(first));

        HttpResponse<String> chat = post("/v1/chat/completions", "{\"model\":\"m\",\"messages\":[]}", Map.of());
        assertThat(chat.statusCode()).isEqualTo(200);
        assertThat(first.completionCount()).isEqualTo(1);
        assertThat(first.completionRequests().get(0).header("authorization")).isEqualTo("Bearer " + BACKEND_KEY);

        assertThat(get("/health", Map.of()).body()).isEqualTo("{\"status\":\"ok\"}");
        assertThat(get("/healthz", Map.of()).statusCode()).isEqualTo(200);
        String metrics = get("/metrics", Map.of()).body();
        assertThat(metrics).contains("http_requests_total{", "continuum_backend_healthy{backend=\"main\"}",
                "jvm_memory_used_bytes");

        HttpResponse<String> denied = get("/admin/config", Map.of());
        assertThat(denied.statusCode()).isEqualTo(401);
        HttpResponse<String> config = get("/admin/config", Map.of("Authorization", "Bearer " + TOKEN));
        assertThat(config.statusCode()).isEqualTo(200);
        assertThat(config.body()).contains("\"name\":\"main\"", "********")
                .doesNotContain(TOKEN).doesNotContain(BACKEND_KEY);
        assertThat(get("/admin/config/full", Map.of("Authorization", "Bearer " + TOKEN)).body())
                .isEqualTo(config.body());

        HttpResponse<String> workers = get("/admin/dynamo/workers", Map.of("Authorization", "Bearer " + TOKEN));
        assertThat(workers.statusCode()).isEqualTo(200);
        assertThat(workers.body()).contains("\"enabled\":false", "\"workers\":[]", "\"subscriptions\":[]");
    }

    @Test
    void appliesAnEditedFileAndRefusesAnInvalidOneWhileTheOldKeepsServing() throws Exception {
        start(config(first));
        replaceFile(config(second));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            post("/v1/chat/completions", "{\"model\":\"m\"}", Map.of());
            assertThat(second.completionCount()).isPositive();
        });

        replaceFile(config(second).replace("url: ", "url: ftp-not-a-url "));
        HttpResponse<String> refused = post("/admin/config/reload", "", Map.of("Authorization", "Bearer " + TOKEN));
        assertThat(refused.statusCode()).isEqualTo(422);
        assertThat(refused.body()).contains("\"result\":\"failure\"", "backends[0].url");

        int before = second.completionCount();
        assertThat(post("/v1/chat/completions", "{\"model\":\"m\"}", Map.of()).statusCode()).isEqualTo(200);
        assertThat(second.completionCount()).isEqualTo(before + 1);
        assertThat(get("/metrics", Map.of()).body()).contains("continuum_config_reloads_total{result=\"failure\"}");
    }

    @Test
    void reloadsOnSighup() throws Exception {
        start(config(first));
        Signals.onHangup(() -> router.reload("sighup"));
        long pid = ProcessHandle.current().pid();
        new ProcessBuilder("kill", "-HUP", Long.toString(pid)).inheritIO().start().waitFor();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(get("/metrics", Map.of()).body())
                .contains("continuum_config_reloads_total{result=\"unchanged\"} 1.0"));
    }

    @Test
    void gracefulShutdownLetsAnInFlightStreamFinish() throws Exception {
        first.defaultReply(Reply.controlledStream());
        start(config(first));
        CompletableFuture<HttpResponse<String>> stream = client.sendAsync(request("/v1/chat/completions")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofString());
        StreamHandle upstream = first.awaitStream(Duration.ofSeconds(10));
        upstream.send("{\"n\":1}");

        CompletableFuture<Void> closing = CompletableFuture.runAsync(router::close);
        await().atMost(Duration.ofSeconds(10)).until(() -> !router.server().ready());
        assertThat(closing).isNotDone();

        upstream.send("{\"n\":2}");
        upstream.finish();
        HttpResponse<String> done = stream.get(10, TimeUnit.SECONDS);
        assertThat(done.statusCode()).isEqualTo(200);
        assertThat(done.body()).contains("data: {\"n\":1}", "data: {\"n\":2}", "data: [DONE]");
        closing.get(10, TimeUnit.SECONDS);
        router = null;
    }

    private String config(TestUpstream upstream) {
        return """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_grace_period: 20s
                  shutdown_quiet_period: 0s
                backends:
                  - name: main
                    url: %s
                    api_key: ${BACKEND_KEY}
                    models: [m]
                health_checks:
                  interval: 1s
                admin:
                  auth:
                    method: bearer_token
                    token: ${ADMIN_TOKEN}
                """.formatted(upstream.baseUrl());
    }

    private void start(String yaml) throws IOException {
        configFile = dir.resolve("config.yaml");
        Files.writeString(configFile, yaml);
        Map<String, String> env = Map.of("ADMIN_TOKEN", TOKEN, "BACKEND_KEY", BACKEND_KEY);
        DynamoSections sections = DynamoSections.create(env);
        ConfigLoader loader = ConfigLoader.builder()
                .environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(configFile))
                .dynamoSections(sections.all())
                .build();
        router = RouterProcess.start(loader, sections);
    }

    /** As editors and config-management tools do: write aside, then rename over the file. */
    private void replaceFile(String yaml) throws IOException {
        Path tmp = dir.resolve("config.yaml.tmp");
        Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
        Files.move(tmp, configFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private HttpRequest.Builder request(String path) {
        InetSocketAddress address = (InetSocketAddress) router.boundAddresses().get(0);
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort() + path))
                .timeout(Duration.ofSeconds(20));
    }

    private HttpResponse<String> get(String path, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = request(path).GET();
        headers.forEach(b::header);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = request(path).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json");
        headers.forEach(b::header);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
