package dev.continuum.router.kv.prompt;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loaded artifact sets, by artifact key: at most {@code maxTokenizers} of them and {@code maxArtifactBytes}
 * of artifacts in all (the least recently used goes first), loaded on a pool of {@code concurrentLoads}
 * threads. {@link #acquire} never waits: a key that is not loaded yet starts its load and answers
 * {@code null} at once, and a key whose load failed answers {@code null} until {@code loadRetry} has passed on
 * the injected clock, when the next request tries again.
 */
final class ModelCache extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(ModelCache.class);

    /** Loads one artifact set; runs on a load thread. */
    @FunctionalInterface
    interface Loader {
        LoadedModel load(PromptArtifacts artifacts, long nowNanos) throws Exception;
    }

    /** Reports each load's outcome (metrics); {@code loaded}, {@code failed} or {@code too_large}. */
    @FunctionalInterface
    interface Outcomes {
        void loaded(String result);
    }

    private sealed interface Slot permits Loading, Failed, Ready {
    }

    private static final class Loading implements Slot {
    }

    private record Failed(long retryAtNanos) implements Slot {
    }

    private record Ready(LoadedModel model) implements Slot {
    }

    private final PromptLimits limits;
    private final Loader loader;
    private final LongSupplier nanoTime;
    private final Outcomes outcomes;
    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    /** Guards the byte total and eviction; taken only on load threads and by {@link #retain}, never by encode. */
    private final Object evictionLock = new Object();
    private long loadedBytes;
    private final AtomicInteger threadNumber = new AtomicInteger();
    private volatile @Nullable ThreadPoolExecutor loads;

    ModelCache(PromptLimits limits, Loader loader, LongSupplier nanoTime, Outcomes outcomes) {
        this.limits = limits;
        this.loader = loader;
        this.nanoTime = nanoTime;
        this.outcomes = outcomes;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(limits.concurrentLoads(), limits.concurrentLoads(),
                30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(limits.maxTokenizers()), r -> {
                    Thread t = new Thread(r, "kv-tokenizer-load-" + threadNumber.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        loads = pool;
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        ThreadPoolExecutor pool = loads;
        loads = null;
        if (pool != null) {
            pool.shutdownNow();
        }
        retain(key -> false);
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The loaded model for {@code artifacts}, with a reference the caller must {@link LoadedModel#release()};
     * or {@code null} when it is not loaded (its load is started or retried here, off this thread).
     */
    @Nullable LoadedModel acquire(PromptArtifacts artifacts) {
        String key = artifacts.key();
        long now = nanoTime.getAsLong();
        Slot slot = slots.get(key);
        if (slot instanceof Ready ready) {
            return ready.model().retain(now) ? ready.model() : null;
        }
        if (slot instanceof Loading) {
            return null;
        }
        if (slot instanceof Failed failed && now - failed.retryAtNanos() < 0) {
            return null;
        }
        Loading marker = new Loading();
        boolean claimed = slot == null ? slots.putIfAbsent(key, marker) == null : slots.replace(key, slot, marker);
        if (claimed) {
            startLoad(artifacts, marker);
        }
        return null;
    }

    private void startLoad(PromptArtifacts artifacts, Loading marker) {
        ThreadPoolExecutor pool = loads;
        if (pool == null) {
            slots.remove(artifacts.key(), marker);
            return;
        }
        try {
            pool.execute(() -> load(artifacts, marker));
        } catch (RejectedExecutionException full) {
            // More distinct keys waiting than the cache holds: let a later request try again.
            slots.remove(artifacts.key(), marker);
        }
    }

    private void load(PromptArtifacts artifacts, Loading marker) {
        String key = artifacts.key();
        LoadedModel model;
        try {
            model = loader.load(artifacts, nanoTime.getAsLong());
        } catch (Exception | LinkageError e) {
            fail(key, marker, "failed", e.toString());
            return;
        }
        if (model.artifactBytes() > limits.maxArtifactBytes()) {
            model.release();
            fail(key, marker, "too_large", model.artifactBytes() + " bytes of artifacts exceed the "
                    + limits.maxArtifactBytes() + " bytes all loaded tokenizers may hold");
            return;
        }
        List<LoadedModel> evicted = new ArrayList<>();
        boolean installed;
        synchronized (evictionLock) {
            while (readyCount() >= limits.maxTokenizers()
                    || loadedBytes + model.artifactBytes() > limits.maxArtifactBytes()) {
                Ready victim = leastRecentlyUsed();
                if (victim == null || !slots.remove(victim.model().key(), victim)) {
                    break;
                }
                loadedBytes -= victim.model().artifactBytes();
                evicted.add(victim.model());
            }
            installed = slots.replace(key, marker, new Ready(model));
            if (installed) {
                loadedBytes += model.artifactBytes();
            }
        }
        evicted.forEach(LoadedModel::release);
        if (!installed) {
            // dropped (its pin was removed) while it loaded
            model.release();
            return;
        }
        outcomes.loaded("loaded");
        LOG.info("kv prompt: loaded tokenizer and chat template {}", LogSafe.escape(key));
    }

    private void fail(String key, Loading marker, String result, String why) {
        if (slots.replace(key, marker, new Failed(nanoTime.getAsLong() + limits.loadRetry().toNanos()))) {
            outcomes.loaded(result);
            LOG.warn("kv prompt: cannot load tokenizer {} ({}); retrying after {}", LogSafe.escape(key),
                    LogSafe.escape(why), limits.loadRetry());
        }
    }

    private int readyCount() {
        int n = 0;
        for (Slot s : slots.values()) {
            if (s instanceof Ready) {
                n++;
            }
        }
        return n;
    }

    private @Nullable Ready leastRecentlyUsed() {
        Ready oldest = null;
        for (Slot s : slots.values()) {
            if (s instanceof Ready ready && (oldest == null
                    || ready.model().lastUsedNanos() - oldest.model().lastUsedNanos() < 0)) {
                oldest = ready;
            }
        }
        return oldest;
    }

    /**
     * Drops every loaded, loading or failed artifact set whose key {@code keep} rejects (a pin removed on
     * reload); tokenizers close once their requests in flight are done.
     */
    void retain(Predicate<String> keep) {
        List<LoadedModel> dropped = new ArrayList<>();
        synchronized (evictionLock) {
            for (Map.Entry<String, Slot> e : slots.entrySet()) {
                if (!keep.test(e.getKey()) && slots.remove(e.getKey(), e.getValue())
                        && e.getValue() instanceof Ready ready) {
                    loadedBytes -= ready.model().artifactBytes();
                    dropped.add(ready.model());
                }
            }
        }
        dropped.forEach(LoadedModel::release);
    }

    /** Loaded artifact sets (tests, metrics). */
    int loadedCount() {
        return readyCount();
    }

    /** Summed artifact bytes of the loaded sets (tests, metrics). */
    long loadedBytes() {
        synchronized (evictionLock) {
            return loadedBytes;
        }
    }

    @Override
    protected String lifecycleName() {
        return "kv prompt tokenizers";
    }
}
