package dev.continuum.router.load;

import dev.continuum.router.discovery.WorkerId;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The latest load sample per (worker, dp_rank), read lock-free by the pickers: through the {@link RankSlot}
 * their candidate index took for each rank, or by key. Lookups return null rather than an Optional because a
 * picker falls back to them per candidate (a detached slot) on the routing path.
 *
 * <p>Samples enter only through the load supervisor's subscriptions: the store admits a sample only for a
 * worker in the live registry snapshot, holds at most {@link #MAX_ENTRIES} keys, and evicts departed
 * workers on every registry generation change.
 */
public interface LoadStore {
    /** The cap on (worker, dp_rank) entries (docs/decisions.md); further new keys are refused as over_capacity. */
    int MAX_ENTRIES = 65_536;
    /** {@code dynamo.load.max_staleness} when unset. */
    Duration DEFAULT_MAX_STALENESS = Duration.ofSeconds(3);

    /** The held sample regardless of age (the picker's quiet-versus-silent-under-load rule needs it), or null. */
    @Nullable LoadSample latest(WorkerId worker, long dpRank);

    /** {@link #latest(WorkerId, long)} by a key the caller already holds (no key is built per lookup). */
    default @Nullable LoadSample latest(SampleKey key) {
        return latest(key.worker(), key.dpRank());
    }

    /**
     * The key's {@link RankSlot}, created if absent and initialized with the held sample: the stable place
     * where the store writes the key's samples from then on. Called when a picker builds its candidate index,
     * not per pick. The store keeps the slot while the key is live (or until the next live-set change, for a
     * key not live yet) and detaches it when the key leaves the live set.
     */
    RankSlot slot(SampleKey key);

    /**
     * How many slots the store has detached so far: a holder of slots whose count moved may hold a detached
     * one (it still reads correctly, through {@link #latest(SampleKey)}) and can take fresh slots.
     */
    long detachedSlots();

    /** The held sample while its age is within {@code maxAge}, else null. */
    default @Nullable LoadSample fresh(WorkerId worker, long dpRank, Duration maxAge) {
        LoadSample s = latest(worker, dpRank);
        return s != null && age(s).compareTo(maxAge) <= 0 ? s : null;
    }

    /** {@link #fresh} with the live {@code dynamo.load.max_staleness}. */
    default @Nullable LoadSample freshDefault(WorkerId worker, long dpRank) {
        return fresh(worker, dpRank, maxStaleness());
    }

    /** The live {@code dynamo.load.max_staleness}. */
    Duration maxStaleness();

    /** The age of a sample now, on the store's ticker. */
    Duration age(LoadSample sample);

    int size();
}
