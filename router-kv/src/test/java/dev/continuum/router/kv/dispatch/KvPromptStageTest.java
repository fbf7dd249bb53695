package dev.continuum.router.kv.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.ChatRewrites;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.kv.artifacts.ArtifactResult;
import dev.continuum.router.kv.artifacts.ArtifactMetrics;
import dev.continuum.router.kv.artifacts.Blake3;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.PromptArtifacts;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SelectionReason;
import dev.continuum.router.shim.ShimConfig;
import dev.continuum.router.shim.ShimDispatcher;
import dev.continuum.router.shim.WorkerPin;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The prompt stage behind the real shim dispatcher (which runs the dispatch and asks the stage), over the real
 * artifact store, resolver and a local artifact directory. The encoder is
 * a stand-in that returns fixed token IDs on its own thread (the real one is the prompt package's; nothing here
 * claims to prove tokenization), and the picker records what it was asked and pins worker 1.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KvPromptStageTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final String BODY = "{\"model\":\"qwen\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"nvext\":{\"cache_salt\":\"tenant-a\"}}";
    private static final int[] TOKENS = new int[40];

    static {
        for (int i = 0; i < TOKENS.length; i++) {
            TOKENS[i] = 151_000 + i;
        }
    }

    @TempDir
    Path dir;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<PickRequest> picked = new CopyOnWriteArrayList<>();
    private final List<PromptArtifacts> encoded = new CopyOnWriteArrayList<>();
    /** What the warm-up asked the encoder to prepare; the first ask of a key is "not loaded yet". */
    private final List<String> prepared = new CopyOnWriteArrayList<>();
    private final List<String> encodedBodies = new CopyOnWriteArrayList<>();
    private final AtomicReference<ShimConfig> shimConfig = new AtomicReference<>(
            new ShimConfig(List.of("frontend"), List.of(), Map.of("qwen", "Qwen/Qwen3-0.6B")));
    private final AtomicReference<KvConfig> kv = new AtomicReference<>();
    private final AtomicReference<DynamoSnapshot> snapshot = new AtomicReference<>();
    private String tokenizerHex;
    private String configHex;
    private Path tokenizer;
    private Path tokenizerConfig;
    private KvPipeline pipeline;
    private ShimDispatcher hook;

    /** Fixed token IDs, completed on another thread as the real encoder's pools do. */
    private final class FixedEncoder extends StartStopSupport implements PromptEncoder {
        @Override
        public CompletableFuture<PromptEncoding> encode(PromptArtifacts artifacts, byte[] chatBody) {
            encoded.add(artifacts);
            encodedBodies.add(new String(chatBody, StandardCharsets.UTF_8));
            return CompletableFuture.supplyAsync(() -> new PromptEncoding.Tokens(TOKENS.clone()));
        }

        @Override
        public boolean prepare(PromptArtifacts artifacts) {
            boolean loaded = prepared.contains(artifacts.key());
            prepared.add(artifacts.key());
            return loaded;
        }

        @Override
        protected CompletableFuture<Void> doStart() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        protected CompletableFuture<Void> doStop() {
            return CompletableFuture.completedFuture(null);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        tokenizer = Files.writeString(dir.resolve("tokenizer.json"), "{\"model\":{}}");
        tokenizerConfig = Files.writeString(dir.resolve("tokenizer_config.json"), "{\"chat_template\":\"x\"}");
        tokenizerHex = Blake3.hex(Files.readAllBytes(tokenizer));
        configHex = Blake3.hex(Files.readAllBytes(tokenizerConfig));
        kv.set(config(false, Set.of(tokenizerHex, configHex)));
        snapshot.set(fleet(worker(1, 16), worker(2, 16)));
        DynamoWorkerPicker recording = (snap, request) -> {
            picked.add(request);
            return new Selection(new WorkerPin(new WorkerId("dynamo", 1), WorkerRole.AGGREGATED, 0, false), null,
                    SelectionReason.ROUND_ROBIN_STALE, SelectionReason.NO_PREFILL_POOL, Selection.Dispatch.NONE);
        };
        hook = ShimDispatcher.create(snapshot::get, shimConfig::get, recording, registry);
        pipeline = KvPipeline.create(kv::get, new FixedEncoder(), registry, Map.of(), System::nanoTime);
        pipeline.start().join();
        hook.use(recording, pipeline.promptStage(snapshot::get)); // what KvRouting installs while dynamo.kv is on
    }

    @AfterEach
    void tearDown() {
        pipeline.stop().join();
    }

    private KvConfig config(boolean sendTokenData, Set<String> pins) {
        List<String> pinned = pins.stream().map(h -> "blake3:" + h).toList();
        return new KvConfig(true, true, false, pinned, dir.resolve("cache").toString(), sendTokenData, 1.0, 1.0, 0.0,
                KvConfig.ConditionalDisaggregation.DEFAULTS);
    }

    private DynamoWorker worker(long id, @Nullable Integer blockSize) {
        return worker(id, blockSize, tokenizerHex);
    }

    private DynamoWorker worker(long id, @Nullable Integer blockSize, String tokHex) {
        return worker(id, blockSize, tokHex, null);
    }

    private DynamoWorker worker(long id, @Nullable Integer blockSize, String tokHex, @Nullable String lora) {
        ModelCard.CardArtifacts artifacts = new ModelCard.CardArtifacts(
                new ModelCard.ArtifactFile("hf_tokenizer_json", tokenizer.toString(), tokHex, false),
                new ModelCard.ArtifactFile("hf_tokenizer_config_json", tokenizerConfig.toUri().toString(), configHex,
                        false),
                null);
        ModelCard card = new ModelCard("Qwen/Qwen3-0.6B", null, false, blockSize, ModelCard.WorkerCapacity.UNKNOWN,
                null, null, null, artifacts, null, null, lora);
        return new DynamoWorker(new WorkerId("dynamo", id), WorkerRole.AGGREGATED, "backend", "generate", card, T0, T0);
    }

    private static DynamoSnapshot fleet(DynamoWorker... workers) {
        return new DynamoSnapshot(true, DiscoverySourceKind.FILE, List.of("dynamo"), 1, true,
                FleetView.of(List.of(workers), List.of()));
    }

    private DispatchHook.@Nullable Answer ask() {
        return ask(new DispatchRequest("qwen", false, List.of("frontend"),
                Unpooled.wrappedBuffer(BODY.getBytes(StandardCharsets.UTF_8)), 10));
    }

    private DispatchHook.@Nullable Answer ask(DispatchRequest request) {
        return hook.plan(request);
    }

    private double prompts(PromptResult r) {
        return registry.get(KvPromptMetrics.NAME).tag("result", r.label()).counter().count();
    }

    private double artifacts(ArtifactResult r) {
        return registry.get(ArtifactMetrics.NAME).tag("result", r.label()).counter().count();
    }

    /** Asks until the artifacts are loaded (the first asks start the fetches and take the load-only path). */
    private DispatchHook.Later later() {
        return later(() -> new DispatchRequest("qwen", false, List.of("frontend"),
                Unpooled.wrappedBuffer(BODY.getBytes(StandardCharsets.UTF_8)), 10));
    }

    private DispatchHook.Later later(java.util.function.Supplier<DispatchRequest> request) {
        AtomicReference<DispatchHook.@Nullable Answer> a = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            a.set(ask(request.get()));
            return a.get() instanceof DispatchHook.Later;
        });
        return (DispatchHook.Later) a.get();
    }

    @Test
    void aReadyModelIsEncodedOffTheCallerAndThePickerSeesItsBlockHashes() throws Exception {
        DispatchHook.Answer first = ask();
        assertThat(first).isInstanceOf(DispatchPlan.class); // artifacts not loaded yet: load-only, now
        assertThat(prompts(PromptResult.TOKENIZER_UNAVAILABLE)).isEqualTo(1);

        DispatchPlan plan = later().plan().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(plan).isNotNull();
        assertThat(plan.pinnedBody()).isNull(); // send_token_data is off
        PickRequest last = picked.get(picked.size() - 1);
        assertThat(last.prompt()).isNotNull();
        assertThat(last.prompt().promptTokens()).isEqualTo(40);
        assertThat(last.prompt().blockHashes()).hasSize(1);
        assertThat(last.prompt().blockHashes().get(0).blockSize()).isEqualTo(16);
        // The request's nvext.cache_salt seeds the hashes, as upstream's; complete blocks only.
        assertThat(last.prompt().blockHashes().get(0).hashes())
                .containsExactly(BlockHasher.of(null, "tenant-a").blockHashes(TOKENS, 16));
        assertThat(encoded.get(0).key()).isEqualTo(tokenizerHex + "+" + configHex + "+");
        assertThat(encoded.get(0).tokenizerConfig()).isPresent();
        assertThat(prompts(PromptResult.ENCODED)).isEqualTo(1);
        assertThat(artifacts(ArtifactResult.LOADED)).isEqualTo(2);
    }

    @Test
    void theWarmUpFetchesAndPreparesPinnedModelsBeforeAnyRequestThenRestsUntilTheFleetChanges() {
        ModelWarmUp warmUp = pipeline.warmUp(snapshot::get);
        // The first passes start the artifact fetches (nothing was asked of the hook), then prepare the model.
        await().atMost(Duration.ofSeconds(10)).until(() -> warmUp.pass() == 1);
        assertThat(prepared).containsOnly(tokenizerHex + "+" + configHex + "+");
        assertThat(artifacts(ArtifactResult.LOADED)).isEqualTo(2);
        assertThat(picked).isEmpty();

        // Settled: the same fleet view and config cost nothing.
        int asked = prepared.size();
        assertThat(warmUp.pass()).isZero();
        assertThat(prepared).hasSize(asked);

        // A new fleet view is looked at again; an unpinned model is not prepared.
        snapshot.set(fleet(worker(1, 16), worker(2, 16)));
        assertThat(warmUp.pass()).isEqualTo(1);
        kv.set(config(false, Set.of()));
        assertThat(warmUp.pass()).isZero();
        assertThat(warmUp.pass()).isZero();
        assertThat(prepared).hasSize(asked + 1);
        // Off, no warm-up runs at all: KvRoutingTest.offStopsTheWarmUpAndTakesTheStageAway.
    }

    @Test
    void withSendTokenDataThePlansBodyCarriesTheTokenIds() throws Exception {
        kv.set(config(true, Set.of(tokenizerHex, configHex)));

        DispatchPlan plan = later().plan().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(plan).isNotNull();
        assertThat(plan.pinnedBody()).isNotNull();
        JsonNode sent = JSON.readTree(plan.pinnedBody().bytes());
        JsonNode expected = JSON.readTree(BODY);
        ((com.fasterxml.jackson.databind.node.ObjectNode) expected.get("nvext")).set("token_data",
                JSON.valueToTree(TOKENS));
        assertThat(sent).isEqualTo(expected);
    }

    @Test
    void unpinnedDisagreeingOrUnsupportedFleetsTakeTheLoadOnlyPathAtOnce() {
        kv.set(config(false, Set.of(tokenizerHex))); // the config file is not pinned
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(prompts(PromptResult.ARTIFACT_UNPINNED)).isEqualTo(1);
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(artifacts(ArtifactResult.UNPINNED)).isEqualTo(1); // once per model and checksum

        kv.set(config(false, Set.of(tokenizerHex, configHex)));
        snapshot.set(fleet(worker(1, 16), worker(2, 16, "cd".repeat(32))));
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(prompts(PromptResult.TOKENIZER_UNAVAILABLE)).isEqualTo(1);

        snapshot.set(fleet(worker(1, 8), worker(2, 100_000)));
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(artifacts(ArtifactResult.UNSUPPORTED)).isEqualTo(2);
        assertThat(encoded).isEmpty();
    }

    @Test
    void aRemovedPinMeansNoEncoding() {
        later();
        pipeline.reconfigure(config(false, Set.of(tokenizerHex)));
        kv.set(config(false, Set.of(tokenizerHex)));
        int before = encoded.size();
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(encoded).hasSize(before);
        // dynamo.kv.enabled: false takes the stage away (KvRoutingTest.offStopsTheWarmUpAndTakesTheStageAway).
    }

    @Test
    void theFirstShimReplicasRewriteIsRenderedAndTheTenantSaltsABodyWithoutCacheSalt() throws Exception {
        kv.set(config(true, Set.of(tokenizerHex, configHex)));
        shimConfig.set(new ShimConfig(List.of("frontend", "frontend-2"), List.of(), Map.of("qwen", "Qwen/Qwen3-0.6B")));
        String body = "{\"model\":\"qwen\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        ChatRewrite global = new ChatRewrite("be brief", GlobalPromptsConfig.MergeStrategy.PREPEND, "\n\n", false);
        ChatRewrites differ = b -> b.equals("frontend") ? global : ChatRewrite.NONE;

        DispatchPlan plan = later(() -> new DispatchRequest("qwen", false, List.of("other", "frontend", "frontend-2"),
                Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), 10, differ, "tenant-9", false, true))
                .plan().toCompletableFuture().get(10, TimeUnit.SECONDS);

        String rendered = encodedBodies.get(encodedBodies.size() - 1);
        assertThat(JSON.readTree(rendered).get("messages").get(0).toString())
                .isEqualTo("{\"role\":\"system\",\"content\":\"be brief\"}");
        PickRequest last = picked.get(picked.size() - 1);
        assertThat(last.prompt().blockHashes().get(0).hashes())
                .containsExactly(BlockHasher.of(null, "tenant-9").blockHashes(TOKENS, 16));
        // The pool's replicas need different rewrites: no single body carries the IDs for both.
        assertThat(plan.backends()).containsExactly("frontend", "frontend-2");
        assertThat(plan.pinnedBody()).isNull();

        DispatchPlan same = later(() -> new DispatchRequest("qwen", false, List.of("frontend", "frontend-2"),
                Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), 10, b -> global, "tenant-9", false, true))
                .plan().toCompletableFuture().get(10, TimeUnit.SECONDS);

        JsonNode sent = JSON.readTree(same.pinnedBody().bytes());
        assertThat(sent.get("messages").get(0).get("content").textValue()).isEqualTo("be brief");
        assertThat(sent.get("nvext").get("token_data")).hasSize(TOKENS.length);
    }

    @Test
    void theCardsLoraNameSeedsTheHashesAndWorkersThatDisagreeOnItAreNotEncoded() throws Exception {
        snapshot.set(fleet(worker(1, 16, tokenizerHex, "my-lora"), worker(2, 16, tokenizerHex, "my-lora")));

        later().plan().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(picked.get(picked.size() - 1).prompt().blockHashes().get(0).hashes())
                .containsExactly(BlockHasher.of("my-lora", "tenant-a").blockHashes(TOKENS, 16));
        assertThat(BlockHasher.of("my-lora", "tenant-a").blockHashes(TOKENS, 16))
                .isNotEqualTo(BlockHasher.of(null, "tenant-a").blockHashes(TOKENS, 16));

        snapshot.set(fleet(worker(1, 16, tokenizerHex, "my-lora"), worker(2, 16, tokenizerHex, null)));
        double before = prompts(PromptResult.TOKENIZER_UNAVAILABLE);
        assertThat(ask()).isInstanceOf(DispatchPlan.class);
        assertThat(prompts(PromptResult.TOKENIZER_UNAVAILABLE)).isEqualTo(before + 1);
    }
}
