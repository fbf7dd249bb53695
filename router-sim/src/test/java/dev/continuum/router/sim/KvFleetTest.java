package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fleet with prefix caches, end to end: each aggregated worker registers a kv-events event channel beside its
 * kv_metrics one and names its tokenizer on its card; a request served through the frontend is tokenized,
 * cached and published as {@code stored} (received by a python3-zmq subscriber found through the registration),
 * and the same prompt again is a cache hit with a shorter simulated prefill.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KvFleetTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private SimFleet fleet;
    private final HttpClient client = HttpClient.newHttpClient();

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
    }

    private SimFleet start() throws Exception {
        Path models = SimTokenizerTest.models();
        fleet = SimFleet.start(SimFleet.Options.defaults(root, "Qwen/Qwen3-0.6B").withWorkers(0, 2)
                .withFrontend("127.0.0.1", 0, 2, 0)
                .withKv(SimKv.of(models.resolve("tokenizer.json"), models.resolve("tokenizer_config.json"))
                        .withPrefill(Duration.ofMillis(5), Duration.ofNanos(10_000))));
        return fleet;
    }

    private HttpResponse<String> send(SimWorker w, String body) throws Exception {
        return send(w, body, null);
    }

    /** A pinned chat request, with the router's decision id header when {@code decisionId} is not null. */
    private HttpResponse<String> send(SimWorker w, String body, String decisionId) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", Long.toUnsignedString(w.instanceId()));
        if (decisionId != null) {
            b.header("x-continuum-decision-id", decisionId);
        }
        return client.send(b.POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String chat(String content) {
        return "{\"model\":\"Qwen/Qwen3-0.6B\",\"messages\":[{\"role\":\"user\",\"content\":"
                + JSON.valueToTree(content) + "}]}";
    }

    @Test
    void eachCachingWorkerRegistersAKvEventsChannelAndItsTokenizer() throws Exception {
        start();
        Map<String, JsonNode> channels = bucket("v1/event_channels");
        assertThat(channels).hasSize(4);
        for (SimWorker w : fleet.workers()) {
            long publisher = w.kvEventsPublisherId().orElseThrow();
            String key = "namespace/dynamo/component/backend/endpoint/generate/topic/kv-events/"
                    + Long.toHexString(publisher);
            JsonNode channel = channels.get(key);
            assertThat(channel).as(key + " in " + channels.keySet()).isNotNull();
            assertThat(channel.get("topic").asText()).isEqualTo("kv-events");
            assertThat(channel.get("instance_id").bigIntegerValue().toString())
                    .isEqualTo(Long.toUnsignedString(publisher));
            assertThat(channel.at("/transport/config/endpoint").asText()).isEqualTo(w.kvEventsEndpoint().orElseThrow());
            assertThat(channel.at("/scope/endpoint/component").asText()).isEqualTo("backend");
        }
        for (JsonNode model : bucket("v1/mdc").values()) {
            JsonNode card = model.get("card_json");
            assertThat(card.at("/tokenizer/hf_tokenizer_json/path").asText()).endsWith("tokenizer.json");
            assertThat(card.at("/tokenizer/hf_tokenizer_json/checksum").asText()).matches("blake3:[0-9a-f]{64}");
            assertThat(card.at("/prompt_formatter/hf_tokenizer_config_json/path").asText())
                    .endsWith("tokenizer_config.json");
        }
    }

    @Test
    void aPromptServedWhereAnotherWorkerHeldItCountsAsAvoidable() throws Exception {
        start();
        KvServing serving = java.util.Objects.requireNonNull(fleet.kvServing());
        WorkerKv first = java.util.Objects.requireNonNull(fleet.worker(0).kv());
        String body = chat("Pack my box with five dozen liquor jugs. ".repeat(12));
        long held = TokenBlocks.of(serving.tokenizer().promptTokens(body), 16).size() * 16L;
        assertThat(held).isGreaterThan(5 * 16);

        assertThat(send(fleet.worker(0), body).statusCode()).isEqualTo(200); // cached on worker 0 only
        assertThat(serving.avoidableTokens()).isZero();
        assertThat(send(fleet.worker(0), body).statusCode()).isEqualTo(200); // a hit where it was: nothing avoidable
        assertThat(serving.avoidableTokens()).isZero();

        // The same prompt on worker 1, which holds none of it: every cached block of worker 0 was avoidable, and
        // worker 0's prefill queue is empty again by then, so it was no busier either.
        await().atMost(PATIENCE).until(() -> first.pendingPrefillTokens(0, serving.now()) == 0);
        assertThat(send(fleet.worker(1), body).statusCode()).isEqualTo(200);
        assertThat(serving.avoidableTokens()).isEqualTo(held);
        assertThat(serving.avoidableNotBusierTokens()).isEqualTo(held);
    }

    @Test
    void avoidableTokensAreKeptByTheRoutersDecisionIdAndTheRestSummed() throws Exception {
        start();
        KvServing serving = java.util.Objects.requireNonNull(fleet.kvServing());
        WorkerKv first = java.util.Objects.requireNonNull(fleet.worker(0).kv());
        String body = chat("Sphinx of black quartz, judge my vow. ".repeat(12));
        long held = TokenBlocks.of(serving.tokenizer().promptTokens(body), 16).size() * 16L;

        assertThat(send(fleet.worker(0), body, "7").statusCode()).isEqualTo(200);
        await().atMost(PATIENCE).until(() -> first.pendingPrefillTokens(0, serving.now()) == 0);
        assertThat(send(fleet.worker(1), body, "8").statusCode()).isEqualTo(200);
        // Without a readable id, the same count is only summed.
        String other = chat("The five boxing wizards jump quickly. ".repeat(12));
        long otherHeld = TokenBlocks.of(serving.tokenizer().promptTokens(other), 16).size() * 16L;
        assertThat(send(fleet.worker(0), other, "not-a-decision").statusCode()).isEqualTo(200);
        await().atMost(PATIENCE).until(() -> first.pendingPrefillTokens(0, serving.now()) == 0);
        assertThat(send(fleet.worker(1), other).statusCode()).isEqualTo(200);

        AvoidableTokens counted = fleet.avoidableTokens().orElseThrow();
        assertThat(counted.forDecision(7)).contains(new AvoidableTokens.Served(0, 0, 0, counted.forDecision(7)
                .orElseThrow().prompt()));
        AvoidableTokens.Served second = counted.forDecision(8).orElseThrow();
        assertThat(second.anyRank()).isEqualTo(held);
        assertThat(second.notBusier()).isEqualTo(held);
        assertThat(second.cached()).isZero();
        assertThat(counted.unpaired()).isEqualTo(new AvoidableTokens.Sum(2, otherHeld, otherHeld));
        assertThat(counted.byDecision()).containsOnlyKeys(7L, 8L);
        assertThat(counted.anyRankTotal()).isEqualTo(held + otherHeld);
    }

    @Test
    void aDecisionIdIsReadOnlyAsTheRouterSendsIt() {
        assertThat(AvoidableTokens.parseDecisionId("4182")).isEqualTo(4182);
        assertThat(AvoidableTokens.parseDecisionId("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
        assertThat(AvoidableTokens.parseDecisionId("9999999999999999999")).isEqualTo(-1); // overflows a long
        assertThat(AvoidableTokens.parseDecisionId("12345678901234567890")).isEqualTo(-1); // 20 digits
        assertThat(AvoidableTokens.parseDecisionId("-1")).isEqualTo(-1);
        assertThat(AvoidableTokens.parseDecisionId("1 ")).isEqualTo(-1);
        assertThat(AvoidableTokens.parseDecisionId("")).isEqualTo(-1);
        assertThat(AvoidableTokens.parseDecisionId(null)).isEqualTo(-1);
    }

    @Test
    void aServedPromptIsPublishedAsStoredAndTheSamePromptAgainHitsTheCache() throws Exception {
        start();
        SimWorker w = fleet.worker(0);
        try (PythonKvEvents sub = PythonKvEvents.subscribe(w.kvEventsEndpoint().orElseThrow())) {
            await().atMost(PATIENCE).until(sub::ready);
            AtomicInteger probe = new AtomicInteger();
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> {
                assertThat(send(w, chat(("probe " + probe.incrementAndGet() + " ").repeat(20))).statusCode())
                        .isEqualTo(200);
                return !sub.messages().isEmpty();
            });
            long requestsBefore = w.kvStats().orElseThrow().requests();
            String body = chat("The quick brown fox jumps over the lazy dog. ".repeat(12));
            TokenBlocks expected = TokenBlocks.of(fleet.kvServing().tokenizer().promptTokens(body), 16);
            assertThat(expected.size()).isGreaterThan(5);

            assertThat(send(w, body).statusCode()).isEqualTo(200);

            await().atMost(PATIENCE).until(() -> stored(sub.messages()).contains(
                    Long.toUnsignedString(expected.seqHashes()[expected.size() - 1])));
            JsonNode event = sub.messages().stream().filter(m -> blockHashes(m).contains(
                    Long.toUnsignedString(expected.seqHashes()[0]))).findFirst().orElseThrow();
            assertThat(event.at("/envelope/payload/worker_id").asText())
                    .isEqualTo(Long.toUnsignedString(w.instanceId()));
            assertThat(event.at("/envelope/payload/storage_tier").asText()).isEqualTo("device");
            assertThat(event.at("/envelope/payload/event/data/stored/parent_hash").isNull()).isTrue();
            assertThat(tokenHashes(event)).containsExactly(
                    java.util.Arrays.stream(expected.tokenHashes()).mapToObj(Long::toUnsignedString)
                            .toArray(String[]::new));

            SimWorker.KvStats first = w.kvStats().orElseThrow();
            assertThat(send(w, body).statusCode()).isEqualTo(200);
            SimWorker.KvStats second = w.kvStats().orElseThrow();
            assertThat(second.requests()).isEqualTo(requestsBefore + 2);
            assertThat(second.cachedTokens() - first.cachedTokens()).isEqualTo(expected.size() * 16L);
            long[] t = second.ttftNanos();
            assertThat(t[t.length - 1]).isLessThan(t[t.length - 2]);
            // The other worker served none of it.
            assertThat(fleet.worker(1).kvStats().orElseThrow().requests()).isZero();

            w.clearKvCache();
            await().atMost(PATIENCE).until(() -> sub.messages().stream()
                    .anyMatch(m -> m.at("/envelope/payload/event/data").asText().equals("cleared")));
            assertThat(w.cachedBlocks(0)).isZero();
        }
    }

    private static List<String> stored(List<JsonNode> messages) {
        return messages.stream().flatMap(m -> blockHashes(m).stream()).toList();
    }

    private static List<String> blockHashes(JsonNode m) {
        return StreamSupport.stream(m.at("/envelope/payload/event/data/stored/blocks").spliterator(), false)
                .map(b -> b.get("block_hash").asText()).toList();
    }

    private static List<String> tokenHashes(JsonNode m) {
        return StreamSupport.stream(m.at("/envelope/payload/event/data/stored/blocks").spliterator(), false)
                .map(b -> b.get("tokens_hash").asText()).toList();
    }

    private Map<String, JsonNode> bucket(String bucket) throws Exception {
        Map<String, JsonNode> out = new HashMap<>();
        try (Stream<Path> files = Files.list(root.resolve(bucket))) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (!name.startsWith(".tmp_")) {
                    out.put(URLDecoder.decode(name.replace("+", "%2B"), StandardCharsets.UTF_8),
                            JSON.readTree(Files.readString(f)));
                }
            }
        }
        return out;
    }
}
