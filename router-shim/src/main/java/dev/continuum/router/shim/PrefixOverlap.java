package dev.continuum.router.shim;

/**
 * The read side of the KV index as the KV-aware picker sees it: which (worker, dp_rank) ranks already hold a
 * prefix of a request's blocks, and how many blocks deep. Implemented by the radix index in {@code router-kv};
 * the picker depends only on this interface, so the picker module never sees fleet-authored events.
 *
 * <p>Contract for implementations: safe to call from any thread (it runs on event loops), never blocks the
 * index's writer or waits for it, and allocates nothing at steady state (the answer goes into the caller's
 * reusable {@link OverlapScores}).
 */
public interface PrefixOverlap {
    /** An index that knows no blocks: every request scores with zero overlap. */
    PrefixOverlap NONE = (hashes, out) -> out.clear();

    /**
     * Clears {@code out}, then adds each rank that holds a contiguous prefix of {@code hashes} (from the first
     * block on), with the length of that prefix in blocks. A rank appears at most once; ranks with no matching
     * first block do not appear. When {@code out} fills up, the deepest matches found so far are kept.
     */
    void findMatches(BlockHashes hashes, OverlapScores out);
}
