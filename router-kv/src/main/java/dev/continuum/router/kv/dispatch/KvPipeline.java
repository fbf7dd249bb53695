package dev.continuum.router.kv.dispatch;

import dev.continuum.router.proxy.ingress.anthropic.TokenCounter;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.kv.artifacts.ArtifactCache;
import dev.continuum.router.kv.artifacts.ArtifactFetcher;
import dev.continuum.router.kv.artifacts.ArtifactMetrics;
import dev.continuum.router.kv.artifacts.ArtifactStore;
import dev.continuum.router.kv.artifacts.ModelArtifactResolver;
import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHashCache;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.selection.BackendKvScorer;
import dev.continuum.router.kv.selection.KvBackendChooser;
import dev.continuum.router.kv.selection.SelectionMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The KV prompt pipeline as one lifecycle component: the artifact store (its fetch pool) and the encoder (its
 * render and tokenizer pools), started in that order and stopped in reverse, and the prompt stage, warm-up and
 * token counter over them. {@link #reconfigure} applies a reloaded {@code dynamo.kv} (pins, cache directory); the
 * stage reads the rest per request. {@link KvRouting} owns one and decides, per config generation, which of its
 * parts run.
 */
public final class KvPipeline extends StartStopSupport {
    private final Supplier<KvConfig> config;
    private final ArtifactStore store;
    private final ModelArtifactResolver resolver;
    private final PromptEncoder encoder;
    private final KvPromptMetrics metrics;
    private final BlockHashCache blockHashes;

    private KvPipeline(Supplier<KvConfig> config, ArtifactStore store, ModelArtifactResolver resolver,
            PromptEncoder encoder, KvPromptMetrics metrics, BlockHashCache blockHashes) {
        this.config = config;
        this.store = store;
        this.resolver = resolver;
        this.encoder = encoder;
        this.metrics = metrics;
        this.blockHashes = blockHashes;
    }

    /**
     * @param config      the live {@code dynamo.kv}
     * @param encoder     renders and tokenizes (started and stopped by this pipeline)
     * @param environment {@code HF_ENDPOINT} and {@code HF_TOKEN} are read from it
     * @param nanoClock   the clock of fetch retries and of re-deciding a model that waits for its artifacts
     */
    public static KvPipeline create(Supplier<KvConfig> config, PromptEncoder encoder, MeterRegistry registry,
            Map<String, String> environment, LongSupplier nanoClock) {
        ArtifactMetrics artifactMetrics = new ArtifactMetrics(registry);
        ArtifactStore store = new ArtifactStore(new ArtifactCache(config.get().cacheDir(), ArtifactFetcher.MAX_BYTES),
                new ArtifactFetcher(environment.get("HF_ENDPOINT"), environment.get("HF_TOKEN")), artifactMetrics,
                nanoClock);
        store.retain(config.get().pinnedHex());
        KvPromptMetrics metrics = new KvPromptMetrics(registry);
        BlockHashCache blockHashes = metrics.blockHashCache(registry, config.get().blockHashCacheBytes());
        return new KvPipeline(config, store, new ModelArtifactResolver(store, artifactMetrics, nanoClock), encoder,
                metrics, blockHashes);
    }

    /** The prompt stage the shim dispatcher asks while KV routing is on. */
    public KvPromptStage promptStage(Supplier<DynamoSnapshot> snapshots) {
        return new KvPromptStage(snapshots, config, resolver, encoder, metrics, blockHashes);
    }

    /**
     * The warm-up that loads the fleet's pinned models before their first request (a lifecycle component of its
     * own: start it after this pipeline, stop it before).
     */
    public ModelWarmUp warmUp(Supplier<DynamoSnapshot> snapshots) {
        return new ModelWarmUp(snapshots, config, resolver, encoder);
    }

    /**
     * {@code count_tokens} from the model's pinned tokenizer when its artifacts are ready, else {@code fallback}'s
     * answer ({@link KvTokenCounter}).
     *
     * @param workerModel the workers' model name for a client's ({@code dynamo.shim.model_map})
     */
    public KvTokenCounter tokenCounter(Supplier<DynamoSnapshot> snapshots, UnaryOperator<String> workerModel,
            TokenCounter fallback) {
        return new KvTokenCounter(snapshots, workerModel, config, resolver, encoder, fallback);
    }

    /**
     * The proxy's chooser among plain backends by their KV cache ({@code dynamo.kv_cache_index.selection}), over this
     * pipeline's artifact store, encoder and block-hash cache, so its models follow the same pins and caches.
     */
    public KvBackendChooser backendChooser(Supplier<KvCacheIndexConfig> index, BackendKvIndex kvIndex,
            MeterRegistry registry) {
        return new KvBackendChooser(index, config, store, encoder, new BackendKvScorer(kvIndex),
                new SelectionMetrics(registry), blockHashes);
    }

    /** Applies a reloaded {@code dynamo.kv}: a removed pin drops what it loaded; a new cache directory is used. */
    public void reconfigure(KvConfig next) {
        store.cache(new ArtifactCache(next.cacheDir(), ArtifactFetcher.MAX_BYTES));
        store.retain(next.pinnedHex());
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        return store.start().thenCompose(v -> encoder.start());
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        return encoder.stop().handle((v, e) -> null).thenCompose(v -> store.stop());
    }

    @Override
    protected String lifecycleName() {
        return "kv pipeline";
    }

    /** Applies the prompt caches' bounds of {@code dynamo.kv} (every config generation). */
    void cacheBounds(KvConfig kv) {
        encoder.segmentCacheBytes(kv.segmentCacheBytes());
        encoder.renderCacheBytes(kv.renderCacheBytes());
        blockHashes.resize(kv.blockHashCacheBytes());
    }
}
