package dev.continuum.router.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigSearchPath;
import dev.continuum.router.core.config.ConfigStore;
import dev.continuum.router.proxy.http.HttpServer;
import dev.continuum.router.testing.LogCapture;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The config history endpoints on a real server over a real config store and file: versions, one version,
 * rollback, export and validate, behind admin auth, each with its audit line. One server for the class; the
 * tests run in the order the history grows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigHistoryEndpointsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String AUTH = "Bearer t0ken-xyz";

    private Path file;
    private ConfigStore store;
    private HttpServer server;
    private ExecutorService blocking;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private int port;

    private static String doc(int upstreamPort, String extra) {
        return """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: false}
                admin: {auth: {method: bearer_token, token: "t0ken-xyz"}}
                backends: [{name: a, url: "http://127.0.0.1:%d", api_key: "sk-secret-upstream"}]
                """.formatted(upstreamPort) + extra;
    }

    @BeforeAll
    void start(@TempDir Path dir) throws IOException {
        file = dir.resolve("config.yaml");
        Files.writeString(file, doc(8000, ""));
        ConfigLoader loader = ConfigLoader.builder().environment(Map.of())
                .searchPath(new ConfigSearchPath(dir, dir.resolve("home"), dir.resolve("etc"))).build();
        store = ConfigStore.builder(loader).build();
        AdminRoute admin = ConfigHistoryEndpoints.register(AdminRoute.builder(
                new AdminAuthenticator(() -> store.current().admin()),
                () -> store.renderer().tree(store.current()), store::reload), store).build();
        blocking = Executors.newSingleThreadExecutor();
        server = HttpServer.builder(store.current(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
                .blockingExecutor(blocking).routePrefix("/admin/", admin).shutdownGrace(Duration.ofMillis(200)).build();
        server.start().join();
        port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
        Files.writeString(file, doc(8001, ""));
        assertThat(store.reload("sighup").result().label()).isEqualTo("success");
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.stop().join();
        }
        if (blocking != null) {
            blocking.shutdownNow();
        }
    }

    private HttpResponse<String> call(String method, String path, String body, String auth) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (auth != null) {
            b.header("authorization", auth);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void everyHistoryEndpointNeedsAdminCredentials() throws Exception {
        int before = store.history().currentNumber();
        for (String[] e : new String[][] {{"GET", "/admin/config/versions"}, {"GET", "/admin/config/versions/1"},
                {"POST", "/admin/config/rollback/1"}, {"GET", "/admin/config/export"}, {"POST", "/admin/config/validate"}}) {
            assertThat(call(e[0], e[1], e[0].equals("POST") ? "{}" : null, null).statusCode()).as(e[1]).isEqualTo(401);
            assertThat(call(e[0], e[1], e[0].equals("POST") ? "{}" : null, "Bearer wrong").statusCode()).as(e[1])
                    .isEqualTo(401);
        }
        assertThat(store.history().currentNumber()).as("nothing was rolled back").isEqualTo(before);
    }

    @Test
    void listsVersionsAndShowsOneMasked() throws Exception {
        JsonNode list = JSON.readTree(call("GET", "/admin/config/versions", null, AUTH).body());
        assertThat(list.get("current").asInt()).isGreaterThanOrEqualTo(2);
        assertThat(list.get("versions").get(0).get("trigger").asText()).isEqualTo("startup");
        assertThat(list.get("versions").get(0).get("restorable").asBoolean()).isTrue();

        HttpResponse<String> one = call("GET", "/admin/config/versions/1", null, AUTH);
        assertThat(one.statusCode()).isEqualTo(200);
        JsonNode v = JSON.readTree(one.body());
        assertThat(v.at("/config/backends/0/url").asText()).isEqualTo("http://127.0.0.1:8000");
        assertThat(one.body()).doesNotContain("sk-secret-upstream").doesNotContain("t0ken-xyz").contains("********");

        assertThat(call("GET", "/admin/config/versions/999", null, AUTH).statusCode()).isEqualTo(404);
        assertThat(call("GET", "/admin/config/versions/x%0a1", null, AUTH).statusCode()).isEqualTo(404);
    }

    @Test
    void exportIsTheRunningConfigMaskedAsYamlOrJson() throws Exception {
        HttpResponse<String> yaml = call("GET", "/admin/config/export", null, AUTH);
        HttpResponse<String> json = call("GET", "/admin/config/export?format=json", null, AUTH);

        assertThat(yaml.statusCode()).isEqualTo(200);
        assertThat(yaml.headers().firstValue("content-type").orElse("")).startsWith("application/yaml");
        assertThat(yaml.body()).contains("backends:").contains("********").doesNotContain("sk-secret-upstream");
        assertThat(JSON.readTree(json.body()).at("/backends/0/api_key").asText()).isEqualTo("********");
        assertThat(call("GET", "/admin/config/export?format=toml", null, AUTH).statusCode()).isEqualTo(400);
    }

    @Test
    void validateChecksAPostedDocumentWithoutApplyingIt() throws Exception {
        int before = store.history().currentNumber();
        var running = store.current();
        try (LogCapture audit = LogCapture.of("continuum.audit")) {
            HttpResponse<String> ok = call("POST", "/admin/config/validate", doc(9000, "cors: {enabled: true}\n"), AUTH);
            HttpResponse<String> strict = call("POST", "/admin/config/validate?strict=true",
                    doc(9000, "cors: {enabled: true}\n"), AUTH);
            HttpResponse<String> bad = call("POST", "/admin/config/validate", doc(9000, "retry: {max_attempts: 0}\n"),
                    AUTH);

            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(ok.body()).at("/warnings/0/path").asText()).isEqualTo("cors");
            assertThat(strict.statusCode()).isEqualTo(422);
            assertThat(JSON.readTree(strict.body()).at("/errors/0/path").asText()).isEqualTo("cors");
            assertThat(bad.statusCode()).isEqualTo(422);
            assertThat(JSON.readTree(bad.body()).at("/errors/0/path").asText()).isEqualTo("retry.max_attempts");
            assertThat(audit.all()).anySatisfy(l -> assertThat(l).contains("admin_config principal=bearer action=validate")
                    .contains("strict=true result=invalid"));
        }
        assertThat(store.current()).isSameAs(running);
        assertThat(store.history().currentNumber()).isEqualTo(before);
    }

    @Test
    void aDocumentNestedTenThousandLevelsIsA422OnValidateAndReloadAndTheRunningConfigStays() throws Exception {
        String deep = "x_extra: " + "[".repeat(10_000) + "]".repeat(10_000) + "\n";
        int before = store.history().currentNumber();
        var running = store.current();

        HttpResponse<String> validate = call("POST", "/admin/config/validate", doc(9000, deep), AUTH);
        assertThat(validate.statusCode()).isEqualTo(422);
        JsonNode error = JSON.readTree(validate.body()).at("/errors/0");
        assertThat(error.get("path").asText()).isEqualTo("x_extra" + "[0]".repeat(127));
        assertThat(error.get("message").asText()).startsWith("nested deeper than 128 levels at <config>:5:");

        String onDisk = Files.readString(file);
        try {
            Files.writeString(file, doc(9000, deep));
            HttpResponse<String> reload = call("POST", "/admin/config/reload", "", AUTH);
            assertThat(reload.statusCode()).isEqualTo(422);
            assertThat(JSON.readTree(reload.body()).get("result").asText()).isEqualTo("failure");
            assertThat(reload.body()).contains("nested deeper than 128 levels at config.yaml:5:");
        } finally {
            Files.writeString(file, onDisk);
        }
        assertThat(store.current()).isSameAs(running);
        assertThat(store.history().currentNumber()).isEqualTo(before);
        assertThat(call("GET", "/admin/config", null, AUTH).statusCode()).isEqualTo(200);
    }

    @Test
    void rollbackAppliesAnOlderVersionThroughTheReloadPathAndIsAudited() throws Exception {
        try (LogCapture audit = LogCapture.of("continuum.audit")) {
            HttpResponse<String> r = call("POST", "/admin/config/rollback/1", "", AUTH);

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("result").asText()).isEqualTo("success");
            assertThat(store.current().backends().get(0).url().getPort()).isEqualTo(8000);
            assertThat(audit.all()).anySatisfy(l -> assertThat(l)
                    .contains("admin_config principal=bearer action=rollback version=1").contains("result=success"));
            assertThat(audit.all()).anySatisfy(l -> assertThat(l)
                    .contains("admin_call method=POST path=/admin/config/rollback/1 principal=bearer outcome=allowed"));
        }
        assertThat(call("POST", "/admin/config/rollback/12345", "", AUTH).statusCode()).isEqualTo(404);
        assertThat(call("GET", "/admin/config/rollback/1", null, AUTH).statusCode()).isEqualTo(405);
    }
}
