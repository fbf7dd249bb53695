package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.SimWorker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The demo's wiring end to end on an ephemeral port: the router discovers the simulated fleet in its file
 * store, subscribes to every worker's kv_metrics, and pins each chat completion to a prefill and a decode
 * worker that the frontend emulator accepts (it refuses anything else), choosing by load once samples are fresh.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DemoTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient client = HttpClient.newHttpClient();
    private Demo demo;

    @AfterEach
    void stop() {
        if (demo != null) {
            demo.close();
        }
    }

    @Test
    void routesPinnedRequestsThroughTheSimulatedFleet() throws Exception {
        demo = Demo.start(Map.of(), List.of("127.0.0.1:0"), null);
        List<SimWorker> workers = demo.fleet().workers();
        assertThat(workers).hasSize(4);
        assertThat(demo.instructions()).contains(demo.routerUrl() + "/v1/chat/completions")
                .contains("Bearer demo");

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode view = adminWorkers();
            assertThat(view.get("workers")).hasSize(4);
            JsonNode subscriptions = view.get("subscriptions");
            assertThat(subscriptions).as(view.toString()).hasSize(4);
            subscriptions.forEach(s -> assertThat(s.get("state").asText()).as(s.toString()).isEqualTo("connected"));
        });
        double loadBefore = selections("load");

        // Concurrent streams keep workers busy, so the published load moves while the router picks.
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            answers.add(client.sendAsync(chat(i % 2 == 0), HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            long decode = Long.parseUnsignedLong(r.headers().firstValue("x-continuum-worker-instance-id").orElseThrow());
            long prefill = Long.parseUnsignedLong(
                    r.headers().firstValue("x-continuum-prefill-instance-id").orElseThrow());
            assertThat(role(decode)).isEqualTo(Role.DECODE);
            assertThat(role(prefill)).isEqualTo(Role.PREFILL);
        }
        // The emulator resolves only decimal pins and refuses a decode pin without a prefill pin: each request
        // it served counted once on a prefill and once on a decode worker.
        long servedPrefill = 0;
        long servedDecode = 0;
        for (SimWorker w : workers) {
            long n = demo.fleet().frontend().served(w.instanceId());
            if (w.role() == Role.PREFILL) {
                servedPrefill += n;
            } else {
                servedDecode += n;
            }
        }
        assertThat(servedPrefill).isEqualTo(12);
        assertThat(servedDecode).isEqualTo(12);
        // Concurrent streams are spread: each one adds to its decode worker's backlog until the next sample.
        assertThat(workers).filteredOn(w -> w.role() == Role.DECODE)
                .allMatch(w -> demo.fleet().frontend().served(w.instanceId()) > 0);
        assertThat(selections("load")).isGreaterThan(loadBefore);
    }

    private Role role(long instanceId) {
        return demo.fleet().workers().stream().filter(w -> w.instanceId() == instanceId).findFirst()
                .orElseThrow(() -> new AssertionError(Long.toUnsignedString(instanceId) + ": not a fleet worker"))
                .role();
    }

    private HttpRequest chat(boolean stream) {
        return HttpRequest.newBuilder(URI.create(demo.routerUrl() + "/v1/chat/completions"))
                .header("content-type", "application/json")
                // Asks the router to disclose the workers it pinned (x-continuum-*-instance-id).
                .header("x-backend", "")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo-model\",\"stream\":" + stream
                        + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build();
    }

    private JsonNode adminWorkers() throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl()
                + "/admin/dynamo/workers")).header("Authorization", "Bearer demo").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The sum of {@code continuum_dynamo_selection_total} series with {@code reason}. */
    private double selections(String reason) throws Exception {
        String metrics = client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith("continuum_dynamo_selection_total{") && line.contains("reason=\"" + reason + "\"")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
