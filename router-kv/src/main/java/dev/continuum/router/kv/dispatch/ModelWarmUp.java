package dev.continuum.router.kv.dispatch;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.kv.artifacts.ModelArtifactResolver;
import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.prompt.PromptEncoder;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads each fleet model's pinned artifacts before its first request: once a second, every model the fleet's
 * cards name is resolved (which starts the fetch of missing pinned artifacts)
 * and a ready one is handed to {@link PromptEncoder#prepare}. Without it a model's first requests after a start,
 * a reload or a new model fall back to load-based selection as {@code tokenizer_unavailable} while the
 * tokenizer loads on first use. A pass that finds every ready model loaded, with the fleet view and config
 * unchanged, ends the work until one of them changes. {@link KvRouting} runs one only while {@code dynamo.kv} is
 * enabled (a new one each time it is turned on: a lifecycle starts once).
 *
 * <p>At most {@link #MAX_MODELS} models are prepared per pass (in fleet order), fewer than the encoder keeps
 * loaded, so warming never evicts what requests use; further models load on their first request.
 */
public final class ModelWarmUp extends StartStopSupport {
    /** Models prepared per pass; below the encoder's 16 loaded tokenizers (docs/kv-prompt.md). */
    static final int MAX_MODELS = 8;
    static final Duration EVERY = Duration.ofSeconds(1);

    private static final Logger LOG = LoggerFactory.getLogger(ModelWarmUp.class);

    private final Supplier<DynamoSnapshot> snapshots;
    private final Supplier<KvConfig> config;
    private final ModelArtifactResolver resolver;
    private final PromptEncoder encoder;
    private final OwnedExecutor scheduler = OwnedExecutor.scheduler("continuum-kv-warm-up", Duration.ofSeconds(1));
    private @Nullable ScheduledFuture<?> ticking;
    /** The fleet view and config of the last pass that found everything loaded; touched by the one thread. */
    private @Nullable DynamoSnapshot settledSnapshot;
    private @Nullable KvConfig settledConfig;
    private boolean failureLogged;

    ModelWarmUp(Supplier<DynamoSnapshot> snapshots, Supplier<KvConfig> config, ModelArtifactResolver resolver,
            PromptEncoder encoder) {
        this.snapshots = snapshots;
        this.config = config;
        this.resolver = resolver;
        this.encoder = encoder;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        return scheduler.start().thenRun(() -> ticking = scheduler.scheduledExecutor().scheduleWithFixedDelay(
                this::pass, 0, EVERY.toNanos(), TimeUnit.NANOSECONDS));
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        ScheduledFuture<?> t = ticking;
        if (t != null) {
            t.cancel(false);
        }
        return scheduler.stop();
    }

    /** One pass; returns how many models it found loaded (tests). */
    int pass() {
        try {
            KvConfig kv = config.get();
            DynamoSnapshot snapshot = snapshots.get();
            if (snapshot == settledSnapshot && kv == settledConfig) {
                return 0;
            }
            boolean settled = true;
            int loaded = 0;
            int prepared = 0;
            Set<String> seen = new HashSet<>();
            for (DynamoWorker w : snapshot.fleet().workers()) {
                ModelCard card = w.card();
                String model = card == null ? null : card.model();
                if (model == null || !seen.add(model)) {
                    continue;
                }
                ModelArtifacts artifacts = resolver.resolve(snapshot, kv, model);
                if (artifacts instanceof ModelArtifacts.Ready ready) {
                    if (prepared++ == MAX_MODELS) {
                        break;
                    }
                    if (encoder.prepare(ready.artifacts())) {
                        loaded++;
                    } else {
                        settled = false;
                    }
                } else if (((ModelArtifacts.Unavailable) artifacts).why() != ModelArtifacts.Why.ARTIFACT_UNPINNED) {
                    settled = false; // possibly still fetching; an unpinned model waits for the operator instead
                }
            }
            settledSnapshot = settled ? snapshot : null;
            settledConfig = settled ? kv : null;
            return loaded;
        } catch (RuntimeException e) {
            // A warm-up failure costs only the first requests' selection; never let it end the schedule.
            if (!failureLogged) {
                failureLogged = true;
                LOG.warn("KV model warm-up failed; models load on their first request instead: {}",
                        LogSafe.escape(String.valueOf(e)));
            }
            return 0;
        }
    }

    @Override
    protected String lifecycleName() {
        return "kv model warm-up";
    }
}
