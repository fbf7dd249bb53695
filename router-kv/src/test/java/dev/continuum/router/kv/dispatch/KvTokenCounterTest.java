package dev.continuum.router.kv.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.kv.artifacts.Blake3;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.prompt.HuggingFacePromptEncoder;
import dev.continuum.router.kv.prompt.PromptLimits;
import dev.continuum.router.shim.ShimConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code count_tokens} through the real pipeline: the artifact store fetches the worker card's pinned tokenizer
 * (a five-word WordLevel tokenizer) and chat template from a local directory, the real encoder renders and
 * tokenizes on its pools, and the count is that encoding's length (the template's role words included), which
 * the estimate cannot give; with the template not pinned, the answer is the estimate (with KV routing off,
 * KvRouting answers the estimate itself: KvRoutingTest).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvTokenCounterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    /** Renders "user hello x assistant": four words of the tokenizer's vocabulary. */
    private static final String TEMPLATE = "{% for m in messages %}{{ m.role }} {{ m.content }} {% endfor %}assistant";

    @TempDir
    Path dir;
    private final AtomicReference<KvConfig> kv = new AtomicReference<>();
    private String tokenizerHex;
    private String configHex;
    private KvPipeline pipeline;
    private KvTokenCounter counter;

    @BeforeEach
    void setUp() throws Exception {
        Path tokenizer = dir.resolve("tokenizer.json");
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/prompt/tiny/tokenizer.json"))) {
            Files.write(tokenizer, in.readAllBytes());
        }
        Path config = Files.writeString(dir.resolve("tokenizer_config.json"),
                JSON.writeValueAsString(Map.of("chat_template", TEMPLATE)));
        tokenizerHex = Blake3.hex(Files.readAllBytes(tokenizer));
        configHex = Blake3.hex(Files.readAllBytes(config));
        kv.set(config(true, Set.of(tokenizerHex, configHex)));
        ModelCard.CardArtifacts artifacts = new ModelCard.CardArtifacts(
                new ModelCard.ArtifactFile("hf_tokenizer_json", tokenizer.toString(), tokenizerHex, false),
                new ModelCard.ArtifactFile("hf_tokenizer_config_json", config.toUri().toString(), configHex, false),
                null);
        ModelCard card = new ModelCard("Tiny/Model", null, false, 16, ModelCard.WorkerCapacity.UNKNOWN, null, null,
                null, artifacts, null, null);
        DynamoSnapshot snapshot = new DynamoSnapshot(true, DiscoverySourceKind.FILE, List.of("dynamo"), 1, true,
                FleetView.of(List.of(new DynamoWorker(new WorkerId("dynamo", 1), WorkerRole.AGGREGATED, "backend",
                        "generate", card, T0, T0)), List.of()));
        ShimConfig shim = new ShimConfig(List.of("frontend"), List.of(), Map.of("tiny", "Tiny/Model"));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        pipeline = KvPipeline.create(kv::get, new HuggingFacePromptEncoder(PromptLimits.defaults(), registry,
                System::nanoTime, dir.resolve("djl")), registry, Map.of(), System::nanoTime);
        pipeline.start().join();
        counter = pipeline.tokenCounter(() -> snapshot, shim::workerModel, new EstimatedTokens());
    }

    @AfterEach
    void tearDown() {
        pipeline.stop().join();
    }

    private KvConfig config(boolean enabled, Set<String> pins) {
        List<String> pinned = pins.stream().map(h -> "blake3:" + h).toList();
        return new KvConfig(enabled, true, false, pinned, dir.resolve("cache").toString(), false, 1.0, 1.0, 0.0,
                KvConfig.ConditionalDisaggregation.DEFAULTS);
    }

    private long count() throws Exception {
        ObjectNode chat = (ObjectNode) JSON.readTree(
                "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hello x\"}]}");
        return counter.inputTokens(chat).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aLoadedTokenizerCountsTheRenderedPrompt() {
        // The estimate of "hello x" is 2; until the artifacts are fetched and the tokenizer loaded, that is the answer.
        await().atMost(Duration.ofSeconds(30)).until(() -> count() == 4);
    }

    @Test
    void withoutAPinnedTemplateTheAnswerIsTheEstimate() throws Exception {
        // Without KV routing KvRouting answers with the estimate itself (KvRoutingTest).
        kv.set(config(true, Set.of(tokenizerHex))); // the template's file is not pinned
        for (int i = 0; i < 3; i++) {
            assertThat(count()).isEqualTo(2);
        }
    }
}
