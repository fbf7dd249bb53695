package dev.continuum.router.load;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.wire.ActiveLoad;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The load store: a concurrent map written by subscriptions (each on its own event loop) and by the
 * supervisor (live-set changes), read lock-free by pickers.
 *
 * <p><b>Live gate without a lock.</b> {@link #setLiveAndRetain} publishes the new live set, then sweeps.
 * {@link #apply} checks the set it read, inserts, then re-reads the field: if the set changed meanwhile and
 * no longer admits the key, it takes its own insert back. Either the sweep runs after the insert (and
 * removes it) or the re-read sees the new set, so a departed worker's sample cannot survive a change.
 *
 * <p><b>Cap.</b> New keys reserve a place in {@link #count} before inserting, so the map never holds more
 * than {@link LoadStore#MAX_ENTRIES} keys even with concurrent writers.
 *
 * <p><b>Slots.</b> A key's {@link RankSlot} is written inside the map's per-key critical section (the
 * {@code compute} that stores or removes the key's sample), so it always shows what the map holds. Slots are
 * created by {@link #slot} (candidate index builds), never by samples, and are detached and dropped by
 * {@link #setLiveAndRetain} when their key is not live: at most the live keys plus those of the newest
 * indexes built since the last live-set change are held.
 */
final class ConcurrentLoadStore implements LoadStore {
    /** Told after a key's sample changed or went away; used for the per-worker gauges. Called on the writer's thread. */
    interface Listener {
        void updated(LoadSample sample);

        void removed(SampleKey key);
    }

    private static final Listener NO_LISTENER = new Listener() {
        @Override
        public void updated(LoadSample sample) {
        }

        @Override
        public void removed(SampleKey key) {
        }
    };

    private final ConcurrentHashMap<SampleKey, LoadSample> samples = new ConcurrentHashMap<>();
    /** Slots handed out; each written only inside {@code samples}' critical section of its key. */
    private final ConcurrentHashMap<SampleKey, RankSlot> slots = new ConcurrentHashMap<>();
    private final AtomicLong detached = new AtomicLong();
    private final AtomicInteger count = new AtomicInteger();
    private final int maxEntries;
    private final LongSupplier ticker;
    /** The live workers and the ranks each one's card declares (the registry generation's view). */
    private volatile Map<WorkerId, DpRanks> live = Map.of();
    private volatile Duration maxStaleness = DEFAULT_MAX_STALENESS;
    private volatile Listener listener = NO_LISTENER;

    ConcurrentLoadStore(LongSupplier ticker) {
        this(ticker, MAX_ENTRIES);
    }

    ConcurrentLoadStore(LongSupplier ticker, int maxEntries) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.maxEntries = maxEntries;
    }

    void listener(Listener newListener) {
        this.listener = newListener;
    }

    void maxStaleness(Duration value) {
        this.maxStaleness = Objects.requireNonNull(value, "maxStaleness");
    }

    long now() {
        return ticker.getAsLong();
    }

    @Override
    public @Nullable LoadSample latest(WorkerId worker, long dpRank) {
        return samples.get(new SampleKey(worker, dpRank));
    }

    @Override
    public @Nullable LoadSample latest(SampleKey key) {
        return samples.get(key);
    }

    @Override
    public RankSlot slot(SampleKey key) {
        RankSlot held = slots.get(key);
        if (held != null) {
            return held;
        }
        RankSlot[] out = new RankSlot[1];
        // Under the key's critical section: a sample stored before is copied in, one stored after writes it.
        samples.compute(key, (k, sample) -> {
            out[0] = slots.computeIfAbsent(k, RankSlot::new);
            if (sample != null && out[0].sample() != sample) {
                out[0].hold(sample);
            }
            return sample;
        });
        return out[0];
    }

    @Override
    public long detachedSlots() {
        return detached.get();
    }

    /** Test access: slots held. */
    int slots() {
        return slots.size();
    }

    @Override
    public Duration maxStaleness() {
        return maxStaleness;
    }

    @Override
    public Duration age(LoadSample sample) {
        return Duration.ofNanos(ticker.getAsLong() - sample.receivedNanos());
    }

    @Override
    public int size() {
        return count.get();
    }

    boolean isLive(WorkerId worker) {
        return live.containsKey(worker);
    }

    /**
     * Stores {@code load} from {@code publisherId} under namespace {@code namespace} unless the worker is not
     * live, its card does not declare the sample's rank, the key is new and the store is full, or the key
     * holds a sample of the same publisher with a sequence at or above this one (a different publisher ID is
     * a restart and replaces it).
     */
    LoadEventResult apply(String namespace, long publisherId, long sequence, ActiveLoad load) {
        WorkerId worker = new WorkerId(namespace, load.workerId());
        Map<WorkerId, DpRanks> gate = live;
        DpRanks ranks = gate.get(worker);
        if (ranks == null || !ranks.admits(load.dpRank())) {
            return LoadEventResult.IDENTITY_MISMATCH;
        }
        SampleKey key = new SampleKey(worker, load.dpRank());
        LoadSample sample = new LoadSample(key, load, publisherId, sequence, ticker.getAsLong());
        Outcome outcome = new Outcome();
        samples.compute(key, (k, held) -> {
            if (held == null) {
                if (count.incrementAndGet() > maxEntries) {
                    count.decrementAndGet();
                    outcome.result = LoadEventResult.OVER_CAPACITY;
                    return null;
                }
                return written(k, sample);
            }
            if (held.publisherId() == publisherId && Long.compareUnsigned(sequence, held.sequence()) <= 0) {
                outcome.result = LoadEventResult.DUPLICATE;
                return held;
            }
            return written(k, sample);
        });
        if (outcome.result != LoadEventResult.APPLIED) {
            return outcome.result;
        }
        Map<WorkerId, DpRanks> after = live;
        if (after != gate && !admitted(after, key)) {
            remove(key, sample);
            return LoadEventResult.IDENTITY_MISMATCH;
        }
        listener.updated(sample);
        return LoadEventResult.APPLIED;
    }

    /** Writes {@code sample} into the key's slot, if one was handed out; inside the key's critical section. */
    private LoadSample written(SampleKey key, LoadSample sample) {
        RankSlot slot = slots.get(key);
        if (slot != null) {
            slot.hold(sample);
        }
        return sample;
    }

    private static boolean admitted(Map<WorkerId, DpRanks> gate, SampleKey key) {
        DpRanks ranks = gate.get(key.worker());
        return ranks != null && ranks.admits(key.dpRank());
    }

    private static final class Outcome {
        LoadEventResult result = LoadEventResult.APPLIED;
    }

    /** Removes {@code key} if it still holds exactly {@code expected}. */
    private void remove(SampleKey key, LoadSample expected) {
        boolean[] removed = {false};
        samples.computeIfPresent(key, (k, held) -> {
            if (held != expected) {
                return held;
            }
            RankSlot slot = slots.get(k);
            if (slot != null) {
                slot.clear();
            }
            removed[0] = true;
            return null;
        });
        if (removed[0]) {
            count.decrementAndGet();
            listener.removed(key);
        }
    }

    /** Drops the samples among {@code keys} that {@code publisherId} wrote (a connect or a sequence gap). */
    void dropPublisher(Collection<SampleKey> keys, long publisherId) {
        for (SampleKey key : keys) {
            LoadSample held = samples.get(key);
            if (held != null && held.publisherId() == publisherId) {
                remove(key, held);
            }
        }
    }

    /**
     * Installs {@code workers} as the live-worker gate and evicts every sample of a worker not in it, or of a
     * rank its card no longer declares (set_live_and_retain, run on every registry generation change).
     */
    void setLiveAndRetain(Map<WorkerId, DpRanks> workers) {
        Map<WorkerId, DpRanks> next = Map.copyOf(workers);
        live = next;
        for (var entry : samples.entrySet()) {
            if (!admitted(next, entry.getKey())) {
                remove(entry.getKey(), entry.getValue());
            }
        }
        for (SampleKey key : slots.keySet()) {
            if (!admitted(next, key)) {
                detach(key);
            }
        }
    }

    /**
     * Detaches and drops the key's slot, inside the key's critical section so that no sample is written into
     * it afterwards; its holders read through the map until they take the key's next slot.
     */
    private void detach(SampleKey key) {
        samples.compute(key, (k, held) -> {
            if (!admitted(live, k)) {
                RankSlot slot = slots.remove(k);
                if (slot != null) {
                    slot.detach();
                    detached.incrementAndGet();
                }
            }
            return held;
        });
    }
}
