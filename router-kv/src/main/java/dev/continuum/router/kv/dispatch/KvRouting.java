package dev.continuum.router.kv.dispatch;

import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.ingress.anthropic.TokenCounter;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.supervisor.KvSupervisor;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.KvPickerSettings;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.PrefixOverlap;
import dev.continuum.router.shim.ShimDispatcher;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one owner of {@code dynamo.kv}: it reads the section once per config generation ({@link #reload}) and every
 * KV part reads that generation, never the config store. What {@code enabled} switches, it switches here, together:
 * <ul>
 *   <li>the shim dispatcher's picker and prompt stage ({@link ShimDispatcher#use}): the KV-aware picker with
 *       {@link KvPromptStage}, or the load-based picker without a stage;</li>
 *   <li>the kv-events subscriptions ({@link KvSupervisor#enabled});</li>
 *   <li>the model warm-up, started when KV routing turns on and stopped when it turns off (a new one each time);</li>
 *   <li>{@code count_tokens}: the pinned tokenizer's count ({@link KvTokenCounter}) or the fallback estimate.</li>
 * </ul>
 * The other keys go to their parts on the same reload: pins and the cache directory to the pipeline, the picker's
 * knobs to the KV-aware picker (one {@link KvPickerSettings} per generation, so a pick allocates none).
 *
 * <p>A lifecycle component: it starts the KV prompt pipeline (artifact store, encoder), then applies the current
 * generation; it stops the warm-up, then the pipeline. Until started and after a stop, the dispatcher is left
 * load-only and {@code count_tokens} estimates. Start it after the kv-events supervisor and before the HTTP server.
 */
public final class KvRouting extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(KvRouting.class);

    private final Generation live;
    private final KvPipeline pipeline;
    private final Supplier<DynamoSnapshot> snapshots;
    private final ShimDispatcher shim;
    private final DynamoWorkerPicker loadPicker;
    private final DynamoWorkerPicker kvPicker;
    private final KvPromptStage stage;
    private final KvModes modes;
    private final KvSupervisor subscriptions;
    private final TokenCounter kvCounter;
    private final TokenCounter fallbackCounter;
    private volatile TokenCounter counting;
    private final TokenCounter counter = chatBody -> counting.inputTokens(chatBody);

    /** Serializes generations, starts and stops; never taken on a request. */
    private final Object switching = new Object();
    private boolean running;
    private @Nullable ModelWarmUp warmUp;
    private CompletableFuture<Void> warmUpsStopping = CompletableFuture.completedFuture(null);

    /** The generation every part reads: written by {@link #reload} only, read once per request or pick. */
    private static final class Generation implements Supplier<KvConfig> {
        private record Parts(KvConfig config, KvPickerSettings picker) {
        }

        private volatile Parts parts;

        Generation(KvConfig first) {
            parts = new Parts(first, first.pickerSettings());
        }

        void set(KvConfig next) {
            parts = new Parts(next, next.pickerSettings());
        }

        @Override
        public KvConfig get() {
            return parts.config();
        }

        KvPickerSettings picker() {
            return parts.picker();
        }
    }

    private KvRouting(Builder b, ShimDispatcher shim, LoadBasedPicking picking, PrefixOverlap index,
            KvSupervisor subscriptions, Supplier<DynamoSnapshot> snapshots) {
        this.live = new Generation(b.initial);
        this.pipeline = KvPipeline.create(live, b.encoder, b.registry, b.environment, b.ticker);
        this.snapshots = snapshots;
        this.shim = shim;
        this.loadPicker = picking.picker();
        Generation g = live;
        this.modes = new KvModes(g, snapshots, b.predicted, b.registry);
        this.kvPicker = picking.kvAware(index, g::picker, b.registry, modes);
        this.stage = pipeline.promptStage(snapshots);
        this.subscriptions = subscriptions;
        this.fallbackCounter = b.fallbackCounter;
        this.kvCounter = pipeline.tokenCounter(snapshots, shim::workerModel, b.fallbackCounter);
        this.counting = fallbackCounter;
    }

    /**
     * @param initial  {@code dynamo.kv} of the config the process starts with
     * @param encoder  renders and tokenizes (started and stopped with this component)
     * @param registry where the pipeline's and the KV-aware picker's meters go
     */
    public static Builder builder(KvConfig initial, PromptEncoder encoder, MeterRegistry registry) {
        return new Builder(initial, encoder, registry);
    }

    /**
     * The proxy's chooser among plain backends by the backend KV cache index, sharing this owner's prompt pipeline
     * and reading {@code dynamo.kv}'s pins and weights from its generation.
     */
    public dev.continuum.router.kv.selection.KvBackendChooser backendChooser(
            Supplier<dev.continuum.router.kv.backend.config.KvCacheIndexConfig> index,
            dev.continuum.router.kv.backend.BackendKvIndex kvIndex, MeterRegistry registry) {
        return pipeline.backendChooser(index, kvIndex, registry);
    }

    /** {@code count_tokens} for the ingresses: the pinned tokenizer's count while KV routing is on, else estimated. */
    public TokenCounter tokenCounter() {
        return counter;
    }

    /** Replica sync's seam into the predicted cache: approximate namespaces' predictions shared between replicas. */
    public dev.continuum.router.shim.SharedPredictions sharedPredictions() {
        return new PredictionSharing(modes);
    }

    /** Each namespace's KV mode and why ({@code kv_modes} of {@code GET /admin/dynamo/workers}). */
    public List<KvModes.NamespaceMode> modes() {
        return modes.modes();
    }

    /** The generation the KV parts read now. */
    public KvConfig config() {
        return live.get();
    }

    /** Whether a model warm-up runs now (KV routing on and started). */
    public boolean warmingUp() {
        synchronized (switching) {
            return warmUp != null;
        }
    }

    /** A new config generation's {@code dynamo.kv}: every part switches to it before this returns. */
    public void reload(KvConfig next) {
        synchronized (switching) {
            live.set(next);
            pipeline.reconfigure(next);
            if (running) {
                apply(next).whenComplete((v, e) -> {
                    if (e != null) {
                        LOG.warn("KV model warm-up did not start; models load on their first request instead: {}",
                                LogSafe.escape(String.valueOf(e)));
                    }
                });
            }
        }
    }

    /** Switches every part to {@code kv}; the future is the warm-up's start, when this turned one on. */
    private CompletableFuture<Void> apply(KvConfig kv) {
        boolean on = kv.enabled();
        pipeline.cacheBounds(kv);
        subscriptions.enabled(on);
        shim.use(on ? kvPicker : loadPicker, on ? stage : null);
        counting = on ? kvCounter : fallbackCounter;
        ModelWarmUp w = warmUp;
        if (on && w == null) {
            ModelWarmUp next = pipeline.warmUp(snapshots);
            warmUp = next;
            return next.start();
        }
        if (!on && w != null) {
            warmUp = null;
            warmUpsStopping = CompletableFuture.allOf(warmUpsStopping, w.stop());
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        return pipeline.start().thenCompose(v -> {
            synchronized (switching) {
                running = true;
                return apply(live.get());
            }
        });
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        CompletableFuture<Void> warmUpsStopped;
        synchronized (switching) {
            running = false;
            shim.use(loadPicker, null);
            counting = fallbackCounter;
            ModelWarmUp w = warmUp;
            warmUp = null;
            warmUpsStopped = w == null ? warmUpsStopping : CompletableFuture.allOf(warmUpsStopping, w.stop());
        }
        return warmUpsStopped.handle((v, e) -> null).thenCompose(v -> pipeline.stop());
    }

    @Override
    protected String lifecycleName() {
        return "kv routing";
    }

    /** What {@link KvRouting} is built from. */
    public static final class Builder {
        private final KvConfig initial;
        private final PromptEncoder encoder;
        private final MeterRegistry registry;
        private Map<String, String> environment = Map.of();
        private LongSupplier ticker = System::nanoTime;
        private TokenCounter fallbackCounter = new EstimatedTokens();
        private @Nullable PredictedBlocks predicted;

        private Builder(KvConfig initial, PromptEncoder encoder, MeterRegistry registry) {
            this.initial = Objects.requireNonNull(initial, "initial");
            this.encoder = Objects.requireNonNull(encoder, "encoder");
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /** Where {@code HF_ENDPOINT} and {@code HF_TOKEN} are read ({@code System.getenv()}); empty by default. */
        public Builder environment(Map<String, String> environment) {
            this.environment = Map.copyOf(environment);
            return this;
        }

        /** The clock of fetch retries and of re-deciding a model that waits for its artifacts. */
        public Builder ticker(LongSupplier ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /** {@code count_tokens} while KV routing is off or the model is not ready; the estimate by default. */
        public Builder fallbackCounter(TokenCounter fallback) {
            this.fallbackCounter = Objects.requireNonNull(fallback, "fallback");
            return this;
        }

        /** The predicted cache the KV-aware picker's picks feed (precise and approximate mode); none by default. */
        public Builder predicted(PredictedBlocks predicted) {
            this.predicted = Objects.requireNonNull(predicted, "predicted");
            return this;
        }

        /**
         * @param shim          the dispatcher whose picker and stage this component sets
         * @param picking       the load-based picking the KV-aware picker shares its index, ledger and counters with
         * @param index         the KV index's read side
         * @param subscriptions the kv-events subscriptions, on while KV routing is (build it {@code enabled(false)}:
         *                      this component turns it on when it starts)
         * @param snapshots     the registry's current view
         */
        public KvRouting build(ShimDispatcher shim, LoadBasedPicking picking, PrefixOverlap index,
                KvSupervisor subscriptions, Supplier<DynamoSnapshot> snapshots) {
            return new KvRouting(this, Objects.requireNonNull(shim, "shim"), Objects.requireNonNull(picking, "picking"),
                    Objects.requireNonNull(index, "index"), Objects.requireNonNull(subscriptions, "subscriptions"),
                    Objects.requireNonNull(snapshots, "snapshots"));
        }
    }
}
