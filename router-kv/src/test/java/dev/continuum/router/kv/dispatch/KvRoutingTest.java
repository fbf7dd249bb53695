package dev.continuum.router.kv.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.kv.artifacts.Blake3;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.kv.prompt.HuggingFacePromptEncoder;
import dev.continuum.router.kv.prompt.PromptLimits;
import dev.continuum.router.kv.supervisor.KvSupervisor;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.ShimConfig;
import dev.continuum.router.shim.ShimDispatcher;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The owner of {@code dynamo.kv} over real parts: the shim dispatcher, the load-based picking, the KV index, the
 * kv-events supervisor (not started: only its switch is read), the real encoder with a five-word tokenizer and a
 * pinned chat template served from a local directory. One reload switches the dispatcher's picker and stage, the
 * subscriptions, the warm-up and {@code count_tokens} together.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvRoutingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    /** Renders "user hello x assistant": four words of the tokenizer's vocabulary. */
    private static final String TEMPLATE = "{% for m in messages %}{{ m.role }} {{ m.content }} {% endfor %}assistant";
    private static final String BODY = "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hello x\"}]}";

    @TempDir
    Path dir;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final MutableDynamoRegistry fleet = MutableDynamoRegistry.create();
    private String tokenizerHex;
    private String configHex;
    private LoadBasedPicking picking;
    private KvSupervisor kvEvents;
    private ShimDispatcher shim;
    private KvRouting routing;

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
        ModelCard.CardArtifacts artifacts = new ModelCard.CardArtifacts(
                new ModelCard.ArtifactFile("hf_tokenizer_json", tokenizer.toString(), tokenizerHex, false),
                new ModelCard.ArtifactFile("hf_tokenizer_config_json", config.toUri().toString(), configHex, false),
                null);
        ModelCard card = new ModelCard("Tiny/Model", null, false, 16, ModelCard.WorkerCapacity.UNKNOWN, null, null,
                null, artifacts, null, null);
        fleet.reconfigure(true, DiscoverySourceKind.FILE, List.of("dynamo"), FleetView.of(List.of(new DynamoWorker(
                new WorkerId("dynamo", 1), WorkerRole.AGGREGATED, "backend", "generate", card, T0, T0)), List.of()));
        ShimConfig shimConfig = new ShimConfig(List.of("frontend"), List.of(), Map.of("tiny", "Tiny/Model"));

        picking = LoadBasedPicking.create(LoadSupervisor.builder(meters).build().store(), System::nanoTime, meters,
                fleet);
        KvIndexWriter index = new KvIndexWriter(meters, IndexLimits.DEFAULT);
        kvEvents = KvSupervisor.builder(index, meters).enabled(false).build(); // as the router builds it
        shim = ShimDispatcher.create(fleet::snapshot, () -> shimConfig, picking.picker(), meters);
        routing = KvRouting.builder(config(true),
                        new HuggingFacePromptEncoder(PromptLimits.defaults(), meters, System::nanoTime, dir.resolve("djl")),
                        meters)
                .fallbackCounter(new EstimatedTokens())
                .build(shim, picking, index.index(), kvEvents, fleet::snapshot);
    }

    @AfterEach
    void tearDown() {
        routing.stop().join();
    }

    private KvConfig config(boolean enabled) {
        return new KvConfig(enabled, true, false, List.of("blake3:" + tokenizerHex, "blake3:" + configHex),
                dir.resolve("cache").toString(), false, 1.0, 1.0, 0.0, KvConfig.ConditionalDisaggregation.DEFAULTS);
    }

    private long count() throws Exception {
        ObjectNode chat = (ObjectNode) JSON.readTree(BODY);
        return routing.tokenCounter().inputTokens(chat).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private DispatchHook.@Nullable Answer ask() {
        return shim.plan(new DispatchRequest("tiny", false, List.of("frontend"),
                Unpooled.wrappedBuffer(BODY.getBytes(StandardCharsets.UTF_8)), 2));
    }

    private double tokenizerLoads() {
        Counter c = meters.find(HuggingFacePromptEncoder.TOKENIZER_LOADS).tag("result", "loaded").counter();
        return c == null ? 0 : c.count();
    }

    private double prompts() {
        return meters.find(KvPromptMetrics.NAME).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static boolean warmUpThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith("continuum-kv-warm-up"));
    }

    @Test
    void untilStartedTheDispatchIsLoadOnlyAndCountTokensEstimates() throws Exception {
        assertThat(shim.promptStage()).isNull();
        assertThat(shim.picker()).isSameAs(picking.picker());
        assertThat(kvEvents.enabled()).isFalse();
        assertThat(routing.warmingUp()).isFalse();
        assertThat(count()).isEqualTo(2); // the estimate of "hello x"
    }

    @Test
    void onInstallsTheKvPickerAndStageSubscribesAndWarmsUpBeforeAnyRequest() throws Exception {
        routing.start().join();

        assertThat(shim.promptStage()).isInstanceOf(KvPromptStage.class);
        assertThat(shim.picker()).isNotSameAs(picking.picker());
        assertThat(kvEvents.enabled()).isTrue();
        assertThat(routing.warmingUp()).isTrue();
        // The warm-up fetches and loads the pinned tokenizer with nothing asked of the stage or the counter.
        await().atMost(Duration.ofSeconds(30)).until(() -> tokenizerLoads() == 1);
        assertThat(prompts()).isZero();

        assertThat(count()).isEqualTo(4); // the rendered prompt's tokens
        DispatchHook.Answer answer = ask();
        assertThat(answer).isInstanceOf(DispatchHook.Later.class);
        DispatchPlan plan = ((DispatchHook.Later) answer).plan().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(plan).isNotNull();
        plan.listener().ended(DispatchPlan.Outcome.SERVED);
        assertThat(meters.get(KvPromptMetrics.NAME).tag("result", "encoded").counter().count()).isEqualTo(1);
    }

    @Test
    void offStopsTheWarmUpAndTakesTheStageAway() throws Exception {
        routing.start().join();
        await().atMost(Duration.ofSeconds(30)).until(() -> tokenizerLoads() == 1);

        routing.reload(config(false));

        assertThat(shim.promptStage()).isNull();
        assertThat(shim.picker()).isSameAs(picking.picker());
        assertThat(kvEvents.enabled()).isFalse();
        assertThat(routing.warmingUp()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> !warmUpThreadAlive());
        // The tokenizer is loaded, but with KV routing off nothing is encoded and count_tokens estimates.
        assertThat(count()).isEqualTo(2);
        double before = prompts();
        assertThat(ask()).isNotInstanceOf(DispatchHook.Later.class);
        assertThat(prompts()).isEqualTo(before);

        // On again: a new warm-up, the stage back.
        routing.reload(config(true));
        assertThat(routing.warmingUp()).isTrue();
        assertThat(shim.promptStage()).isInstanceOf(KvPromptStage.class);
        assertThat(count()).isEqualTo(4);
    }

    @Test
    void aStopLeavesTheDispatcherLoadOnly() throws Exception {
        routing.start().join();
        routing.stop().join();

        assertThat(shim.promptStage()).isNull();
        assertThat(shim.picker()).isSameAs(picking.picker());
        assertThat(routing.warmingUp()).isFalse();
        assertThat(count()).isEqualTo(2);
        routing.reload(config(true)); // a reload after the stop switches nothing back on
        assertThat(shim.promptStage()).isNull();
        assertThat(routing.warmingUp()).isFalse();
    }
}
