package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.sim.SimFleet;
import dev.continuum.router.sim.SimWorker;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router's active sequences end to end: the router process in front of the simulated fleet over real sockets
 * (workers registered in Dynamo's file store, kv_metrics over ZMQ, the direct-mode frontend emulator streaming
 * the answers). What the router counts is read where an operator reads it, from {@code /metrics}: the backlog
 * rises at dispatch, the prefill part drops at the first token and the rest at the end, at a client that
 * leaves mid-stream, and when the worker leaves the fleet mid-request.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ActiveSequencesEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    /** 400 words: the router's estimate is 500 tokens (characters / 4), 32 blocks of 16. */
    private static final String PROMPT = "word ".repeat(400).trim();
    private static final double TOKENS = 500;
    private static final double BLOCKS = 32;

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private SimFleet fleet;
    private RouterProcess router;

    @AfterEach
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void theBacklogRisesAtDispatchThePrefillPartDropsAtTheFirstTokenAndTheRestAtTheEnd() throws Exception {
        start(1, 30);
        SimWorker worker = fleet.worker(0);
        worker.stall(); // holds the request before its first token
        CompletableFuture<HttpResponse<String>> answer = client.sendAsync(chat(), HttpResponse.BodyHandlers.ofString());

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_sequences")).isEqualTo(1);
            assertThat(metric("continuum_dynamo_active_prefill_tokens")).isEqualTo(TOKENS);
            assertThat(metric("continuum_dynamo_active_blocks")).isEqualTo(BLOCKS);
        });
        // The sample the worker publishes meanwhile does not erase the router's own count.
        assertThat(worker.inFlight()).isEqualTo(1);

        worker.resume(); // tokens flow: 30 of them, 100 ms apart
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_prefill_tokens")).isZero();
            assertThat(metric("continuum_dynamo_active_blocks")).isEqualTo(BLOCKS);
        });
        assertThat(answer).isNotDone();

        HttpResponse<String> r = answer.get(30, TimeUnit.SECONDS);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("data: [DONE]");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_blocks")).isZero();
            assertThat(metric("continuum_dynamo_active_sequences")).isZero();
        });
        assertThat(metric("continuum_dynamo_active_sequence_expirations_total")).isZero();
    }

    @Test
    void aClientThatLeavesMidStreamReleasesItsBlocksAtOnce() throws Exception {
        start(1, 300); // a 30 s stream: only the client's leaving can end it within the test
        HttpResponse<InputStream> r = client.send(chat(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        InputStream body = r.body();
        BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        String first;
        do {
            first = lines.readLine();
        } while (first != null && !first.startsWith("data: "));
        assertThat(first).isNotNull();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_prefill_tokens")).isZero();
            assertThat(metric("continuum_dynamo_active_blocks")).isEqualTo(BLOCKS);
        });

        body.close(); // the client goes away mid-stream
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_blocks")).isZero();
            assertThat(metric("continuum_dynamo_active_sequences")).isZero();
        });
        assertThat(metric("continuum_dynamo_active_sequence_expirations_total")).isZero();
    }

    @Test
    void aWorkerThatLeavesMidRequestTakesItsSequenceWithIt() throws Exception {
        start(2, 30);
        fleet.workers().forEach(SimWorker::stall);
        CompletableFuture<HttpResponse<String>> answer = client.sendAsync(chat(), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(
                () -> assertThat(metric("continuum_dynamo_active_blocks")).isEqualTo(BLOCKS));
        SimWorker busy = fleet.workers().stream().filter(w -> w.inFlight() == 1).findFirst().orElseThrow();

        deregister(busy.instanceId()); // its registration leaves the store; its frontend keeps the request open
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(metric("continuum_dynamo_active_sequence_expirations_total", "reason=\"worker_left\""))
                    .isEqualTo(1);
            assertThat(metric("continuum_dynamo_active_blocks")).isZero();
            assertThat(metric("continuum_dynamo_active_prefill_tokens")).isZero();
        });
        assertThat(answer).isNotDone();

        // The request still ends (the emulator serves it once resumed); its late end finds nothing to release.
        fleet.workers().forEach(SimWorker::resume);
        answer.get(30, TimeUnit.SECONDS);
        assertThat(metric("continuum_dynamo_active_blocks")).isZero();
        assertThat(metric("continuum_dynamo_active_sequences")).isZero();
    }

    /** Deletes every file-store entry naming {@code instanceId}, as a worker's crash and the store's TTL would. */
    private void deregister(long instanceId) throws Exception {
        String id = Long.toUnsignedString(instanceId);
        try (Stream<Path> files = Files.walk(dir.resolve("store"))) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                if (Files.readString(f).contains(id)) {
                    Files.deleteIfExists(f);
                }
            }
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode view = JSON.readTree(send(get("/admin/dynamo/workers")).body());
            assertThat(view.get("workers")).as(view.toString()).hasSize(1);
        });
    }

    /** An aggregated fleet of {@code workers} streaming {@code chunks} tokens 100 ms apart, and the router. */
    private void start(int workers, int chunks) throws Exception {
        fleet = SimFleet.start(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(0, workers)
                .withFrontend("127.0.0.1", 0, chunks, 100));
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: frontend, url: "%s", models: ["%s"]}
                disaggregated_serving: {enabled: true, fallback_to_unified: false}
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                dynamo:
                  enabled: true
                  discovery:
                    source: file
                    file:
                      root: "%s"
                      namespaces: [dynamo]
                      rescan_interval: 100ms
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                """.formatted(fleet.frontendUrl(), MODEL, dir.resolve("store"));
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections, System::nanoTime);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode view = JSON.readTree(send(get("/admin/dynamo/workers")).body());
            assertThat(view.get("workers")).as(view.toString()).hasSize(workers);
            view.get("subscriptions").forEach(s -> assertThat(s.get("state").asText()).isEqualTo("connected"));
        });
    }

    private HttpRequest chat() {
        String body = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\""
                + PROMPT + "\"}]}";
        return HttpRequest.newBuilder(uri("/v1/chat/completions")).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private HttpRequest get(String path) {
        return HttpRequest.newBuilder(uri(path)).GET().build();
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private double metric(String name, String... labels) throws Exception {
        double sum = 0;
        for (String line : send(get("/metrics")).body().split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " "))
                    && List.of(labels).stream().allMatch(line::contains)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
