package dev.continuum.router.shim;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.load.wire.ActiveLoad;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/** A load store and ticker that tests script by hand: samples are received "now" on the manual ticker. */
final class ScriptedLoad implements LoadStore, LongSupplier {
    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
    private final Map<SampleKey, LoadSample> samples = new ConcurrentHashMap<>();
    private long sequence;
    Duration maxStaleness = LoadStore.DEFAULT_MAX_STALENESS;

    @Override
    public long getAsLong() {
        return now.get();
    }

    void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    /** A sample for rank 0 or {@code rank}: decode blocks via active_decode_blocks, prefill tokens. */
    void sample(WorkerId worker, long rank, @Nullable Long decodeBlocks, @Nullable Long prefillTokens) {
        sample(worker, rank, new ActiveLoad(worker.instanceId(), rank, decodeBlocks, prefillTokens, null, null));
    }

    void sample(WorkerId worker, long rank, ActiveLoad load) {
        samples.put(new SampleKey(worker, rank), new LoadSample(new SampleKey(worker, rank), load, 1, ++sequence,
                now.get()));
    }

    void drop(WorkerId worker, long rank) {
        samples.remove(new SampleKey(worker, rank));
    }

    @Override
    public @Nullable LoadSample latest(WorkerId worker, long dpRank) {
        return samples.get(new SampleKey(worker, dpRank));
    }

    @Override
    public @Nullable LoadSample latest(SampleKey key) {
        return samples.get(key); // by the caller's key, as the real store does: allocation tests count the picker only
    }



    @Override
    public Duration maxStaleness() {
        return maxStaleness;
    }

    @Override
    public Duration age(LoadSample sample) {
        return Duration.ofNanos(now.get() - sample.receivedNanos());
    }

    @Override
    public int size() {
        return samples.size();
    }
}
