package dev.continuum.router.kv.artifacts;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.ModelCard.ArtifactFile;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pinned artifacts, fetched in the background: {@link #request} is cheap and never blocks (callers are event loops
 * and the model resolver), and queues a fetch on a pool of {@link #CONCURRENT_FETCHES} threads when the checksum is
 * pinned and neither loaded, in flight nor failed less than {@link #RETRY_AFTER} ago (by the injected clock).
 * A fetch looks in the cache first, then reads the card's location through the {@link ArtifactFetcher}, checks the
 * bytes against the pinned checksum and writes them to the cache.
 *
 * <p>{@link #retain} drops every entry (and its blob) whose checksum is no longer pinned: a removed pin unloads
 * what it allowed. Every change of what is ready bumps {@link #generation}, which resolvers key their caches on.
 */
public final class ArtifactStore extends StartStopSupport {
    public static final int CONCURRENT_FETCHES = 2;
    /** Queued fetches beyond the running ones; more are not queued (the next request asks again). */
    static final int MAX_QUEUED = 64;
    public static final Duration RETRY_AFTER = Duration.ofMinutes(5);

    private static final Logger log = LoggerFactory.getLogger(ArtifactStore.class);

    /** One checksum's state. */
    private sealed interface Entry permits Loading, Ready, Failed {
    }

    private record Loading() implements Entry {
    }

    private record Ready(Path path) implements Entry {
    }

    private record Failed(long atNanos, ArtifactResult result) implements Entry {
    }

    private static final Loading LOADING = new Loading();

    /** What {@link #request} settled on; the fetch options travel with it. */
    public record Options(boolean allowHttp, boolean allowHf) {
    }

    private volatile ArtifactCache cache;
    private final ArtifactFetcher fetcher;
    private final ArtifactMetrics metrics;
    private final LongSupplier nanoClock;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicLong generation = new AtomicLong();
    private final AtomicInteger threads = new AtomicInteger();
    private volatile Set<String> pinned = Set.of();
    private @Nullable ThreadPoolExecutor pool;

    public ArtifactStore(ArtifactCache cache, ArtifactFetcher fetcher, ArtifactMetrics metrics, LongSupplier nanoClock) {
        this.cache = cache;
        this.fetcher = fetcher;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        ThreadPoolExecutor p = new ThreadPoolExecutor(CONCURRENT_FETCHES, CONCURRENT_FETCHES, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(MAX_QUEUED), r -> {
                    Thread t = new Thread(r, "continuum-kv-artifacts-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        p.allowCoreThreadTimeOut(true);
        pool = p;
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        ThreadPoolExecutor p = pool;
        pool = null;
        if (p != null) {
            p.shutdownNow();
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected String lifecycleName() {
        return "kv artifacts";
    }

    /** Bumped whenever an artifact becomes ready, fails or is dropped. */
    public long generation() {
        return generation.get();
    }

    public boolean pinned(String hex) {
        return pinned.contains(hex);
    }

    /** The verified cache path of {@code hex}, or null when it is not (yet) loaded. */
    public @Nullable Path ready(String hex) {
        return entries.get(hex) instanceof Ready r ? r.path() : null;
    }

    /**
     * Moves to another cache directory ({@code artifact_cache_dir} reloaded): everything is looked up again there,
     * the old directory is left as it is.
     */
    public void cache(ArtifactCache next) {
        if (next.blobs().equals(cache.blobs())) {
            return;
        }
        cache = next;
        entries.clear();
        generation.incrementAndGet();
    }

    /**
     * Applies the current pins: entries of checksums no longer pinned are dropped and their blobs deleted (on the
     * pool; a store not started deletes nothing).
     */
    public void retain(Set<String> pinnedHex) {
        pinned = Set.copyOf(pinnedHex);
        for (String hex : entries.keySet()) {
            if (!pinned.contains(hex) && entries.remove(hex) != null) {
                generation.incrementAndGet();
                log.info("kv artifact blake3:{} unpinned: dropped", hex);
                submit(() -> {
                    try {
                        cache.remove(hex);
                    } catch (IOException e) {
                        log.warn("kv artifact blake3:{}: could not delete its blob: {}", hex, LogSafe.escape(e));
                    }
                });
            }
        }
    }

    /**
     * Asks for {@code file} to be loaded. Returns its path when ready; otherwise null, with a fetch queued when one
     * is due. An unpinned checksum is never fetched (the caller counts and logs it, once per model).
     */
    public @Nullable Path request(ArtifactFile file, Options options) {
        String hex = file.blake3Hex();
        if (hex == null || !pinned.contains(hex)) {
            return null;
        }
        Entry e = entries.get(hex);
        if (e instanceof Ready r) {
            return r.path();
        }
        if (e instanceof Loading) {
            return null;
        }
        if (e instanceof Failed f && nanoClock.getAsLong() - f.atNanos() < RETRY_AFTER.toNanos()) {
            return null;
        }
        boolean claimed = e == null ? entries.putIfAbsent(hex, LOADING) == null : entries.replace(hex, e, LOADING);
        if (claimed && !submit(() -> load(file, hex, options))) {
            entries.remove(hex, LOADING);
        }
        return null;
    }

    private boolean submit(Runnable task) {
        ThreadPoolExecutor p = pool;
        if (p == null) {
            return false;
        }
        try {
            p.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private void load(ArtifactFile file, String hex, Options options) {
        Entry outcome;
        try {
            outcome = fetch(file, hex, options);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            entries.remove(hex, LOADING);
            return;
        } catch (RuntimeException e) {
            log.warn("kv artifact blake3:{}: {}", hex, LogSafe.escape(e));
            metrics.count(ArtifactResult.FETCH_FAILED);
            outcome = new Failed(nanoClock.getAsLong(), ArtifactResult.FETCH_FAILED);
        }
        // A pin removed while the fetch ran: drop what it fetched.
        if (!pinned.contains(hex)) {
            entries.remove(hex, LOADING);
            return;
        }
        if (entries.replace(hex, LOADING, outcome)) {
            generation.incrementAndGet();
        }
    }

    private Entry fetch(ArtifactFile file, String hex, Options options) throws InterruptedException {
        try {
            ArtifactCache.Read cached = cache.verify(hex);
            if (cached == ArtifactCache.Read.VERIFIED) {
                metrics.count(ArtifactResult.CACHED);
                return new Ready(cache.path(hex));
            }
            if (cached == ArtifactCache.Read.EVICTED) {
                metrics.count(ArtifactResult.EVICTED);
                log.warn("kv artifact blake3:{}: the cached blob was modified on disk; deleted, fetching again", hex);
            }
            ArtifactLocation location = ArtifactLocation.parse(file.path());
            if (location == null) {
                return failed(hex, ArtifactResult.DISALLOWED, "unsupported location " + LogSafe.escape(file.path()));
            }
            byte[] bytes = fetcher.fetch(location, file.size(), options.allowHttp(), options.allowHf());
            String actual = Blake3.hex(bytes);
            if (!actual.equals(hex)) {
                return failed(hex, ArtifactResult.CHECKSUM_MISMATCH, "the bytes at " + LogSafe.escape(file.path())
                        + " hash to blake3:" + actual);
            }
            Path path = cache.put(hex, bytes);
            metrics.count(ArtifactResult.LOADED);
            log.info("kv artifact blake3:{} loaded from {} ({} bytes)", hex, LogSafe.escape(file.path()), bytes.length);
            return new Ready(path);
        } catch (ArtifactFetcher.Failure f) {
            return failed(hex, f.result(), f.getMessage() + " (" + LogSafe.escape(file.path()) + ")");
        } catch (IOException e) {
            return failed(hex, ArtifactResult.FETCH_FAILED, LogSafe.escape(e) + " (" + LogSafe.escape(file.path()) + ")");
        }
    }

    private Entry failed(String hex, ArtifactResult result, String why) {
        metrics.count(result);
        log.warn("kv artifact blake3:{}: {} ({}); retried after {}", hex, result.label(), LogSafe.escape(why),
                RETRY_AFTER);
        return new Failed(nanoClock.getAsLong(), result);
    }

    /** The last failure of {@code hex}, or null (for the admin view and tests). */
    public @Nullable ArtifactResult failure(String hex) {
        return entries.get(hex) instanceof Failed f ? f.result() : null;
    }
}
