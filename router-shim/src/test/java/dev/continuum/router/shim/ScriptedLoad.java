package dev.continuum.router.shim;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.RankSlot;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.load.wire.ActiveLoad;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A load store and ticker that tests script by hand: samples are received "now" on the manual ticker. Slots
 * are kept as the real store keeps them (written in the map's per-key critical section); {@link #retire}
 * detaches one as a live-set change does.
 */
final class ScriptedLoad implements LoadStore, LongSupplier {
    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
    private final Map<SampleKey, LoadSample> samples = new ConcurrentHashMap<>();
    private final Map<SampleKey, RankSlot> slots = new ConcurrentHashMap<>();
    private final AtomicLong detached = new AtomicLong();
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
        SampleKey key = new SampleKey(worker, rank);
        LoadSample sample = new LoadSample(key, load, 1, ++sequence, now.get());
        samples.compute(key, (k, held) -> {
            RankSlot slot = slots.get(k);
            if (slot != null) {
                slot.hold(sample);
            }
            return sample;
        });
    }

    void drop(WorkerId worker, long rank) {
        samples.computeIfPresent(new SampleKey(worker, rank), (k, held) -> {
            RankSlot slot = slots.get(k);
            if (slot != null) {
                slot.clear();
            }
            return null;
        });
    }

    /** Detaches the key's slot, as the store does when the key leaves the live set; its sample stays. */
    void retire(WorkerId worker, long rank) {
        samples.compute(new SampleKey(worker, rank), (k, held) -> {
            RankSlot slot = slots.remove(k);
            if (slot != null) {
                slot.detach();
                detached.incrementAndGet();
            }
            return held;
        });
    }

    @Override
    public RankSlot slot(SampleKey key) {
        RankSlot[] out = new RankSlot[1];
        samples.compute(key, (k, held) -> {
            out[0] = slots.computeIfAbsent(k, RankSlot::new);
            if (held != null && out[0].sample() != held) {
                out[0].hold(held);
            }
            return held;
        });
        return out[0];
    }

    @Override
    public long detachedSlots() {
        return detached.get();
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
