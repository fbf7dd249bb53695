package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wired process against a real etcd: a worker a Dynamo process registers shows up in
 * {@code GET /admin/dynamo/workers}, requests for its model are pinned to it on the way to the shim,
 * it leaves when its key goes, and a reload that turns discovery
 * off empties the view without a restart. The router itself never writes to etcd.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DynamoFleetTest {
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.plain();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long INSTANCE = 0x1a2b3c4dL;
    private static final String MODEL = "Qwen/Qwen3-0.6B";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private final TestUpstream shim = TestUpstream.start("shim").models(MODEL).defaultReply(Reply.echo());
    private RouterProcess router;

    @AfterEach
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        shim.close();
        ETCD.delete(DynamoRecords.endpointKey("dynamo", "backend", "generate", INSTANCE));
        ETCD.delete(DynamoRecords.cardKey("dynamo", "backend", "generate", INSTANCE));
    }

    @Test
    void showsAWorkerRegisteredInEtcdAndFollowsReloads() throws Exception {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(true));
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections);
        long revisionBefore = ETCD.revision();

        ETCD.put(DynamoRecords.endpointKey("dynamo", "backend", "generate", INSTANCE),
                DynamoRecords.endpoint("dynamo", "backend", "generate", INSTANCE));
        ETCD.put(DynamoRecords.cardKey("dynamo", "backend", "generate", INSTANCE),
                DynamoRecords.model("dynamo", "backend", "generate", INSTANCE,
                        DynamoRecords.card(MODEL, "Aggregated")));
        long revisionAfterWorker = ETCD.revision();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            JsonNode view = workers();
            assertThat(view.get("enabled").asBoolean()).isTrue();
            assertThat(view.get("workers")).hasSize(1);
            assertThat(view.get("workers").get(0).get("instance_id").asText()).isEqualTo("1a2b3c4d");
            // The endpoint and the card are two watch events: pinning needs the card's model and role too.
            assertThat(view.get("workers").get(0).get("model").asText()).isEqualTo(MODEL);
            assertThat(view.get("workers").get(0).get("role").asText()).isNotEqualTo("unknown");
            assertThat(view.get("broker_coverage").isNull()).as("null under transport: direct").isTrue();
        });

        // A client's own pin is stripped; the router pins the discovered worker, in decimal.
        HttpResponse<String> pinned = client.send(HttpRequest.newBuilder(uri("/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", "999").header("x-backend", "")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"messages\":[]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(pinned.statusCode()).isEqualTo(200);
        assertThat(shim.completionRequests().get(0).header("x-dynamo-worker-instance-id"))
                .isEqualTo(Long.toString(INSTANCE));
        assertThat(pinned.headers().firstValue("x-continuum-worker-instance-id")).hasValue(Long.toString(INSTANCE));
        assertThat(pinned.headers().map().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"));

        ETCD.delete(DynamoRecords.endpointKey("dynamo", "backend", "generate", INSTANCE));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(workers().get("workers")).isEmpty());

        // Under transport: broker (no bus running), every configured namespace is reported uncovered, in the admin
        // view at once and in the debounced gauges.
        Files.writeString(file, config(true).replace("  load:\n", "  load:\n    transport: broker\n"));
        router.reload("test");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(workers().get("broker_coverage"))
                .isEqualTo(JSON.readTree("[{\"namespace\":\"dynamo\",\"covered\":false,\"brokers\":[],"
                        + "\"pending_subscriptions\":0}]")));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(client.send(HttpRequest.newBuilder(
                uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body())
                .contains("continuum_dynamo_broker_namespace_sessions{namespace=\"dynamo\"} 0.0")
                .contains("continuum_dynamo_broker_pending_subscriptions{family=\"kv_metrics\",namespace=\"dynamo\"} 0.0"));

        Files.writeString(file, config(false));
        router.reload("test");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(workers().get("enabled").asBoolean()).isFalse());
        // Only the test's own two puts and one delete moved etcd's revision.
        assertThat(ETCD.revision()).isEqualTo(revisionAfterWorker + 1);
        assertThat(revisionAfterWorker).isEqualTo(revisionBefore + 2);
    }

    private String config(boolean enabled) {
        return """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: frontend, url: "%s", models: ["%s"]}
                disaggregated_serving: {enabled: true}
                admin:
                  auth:
                    method: none
                dynamo:
                  enabled: %s
                  discovery:
                    etcd:
                      endpoints: ["%s"]
                      namespace: dynamo
                      watch_reconnect_backoff: {initial: 100ms, max: 1s}
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                """.formatted(shim.baseUrl(), MODEL, enabled, ETCD.endpoint());
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private JsonNode workers() throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri("/admin/dynamo/workers")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
