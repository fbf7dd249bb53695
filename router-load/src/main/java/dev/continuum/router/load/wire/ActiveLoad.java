package dev.continuum.router.load.wire;

import org.jspecify.annotations.Nullable;

/**
 * Dynamo's {@code ActiveLoad} sample (see {@code docs/load-signals.md}). The worker ID is an unsigned 64-bit
 * identity held in a long (compare it with {@link Long#compareUnsigned}); the three load counters are u64 on
 * the wire too, but they are magnitudes: the decoder saturates them at {@link Long#MAX_VALUE}, and this record
 * refuses a negative one, so arithmetic on them never sees a wrapped value. A null field was nil (or absent)
 * on the wire and exports no metric series.
 *
 * @param workerId            the worker's instance ID
 * @param dpRank              data-parallel rank (0 when absent), an unsigned 32-bit value
 * @param activeDecodeBlocks  decode block load (KV routers; some workers)
 * @param activePrefillTokens the scheduler's prefill backlog (nil from workers)
 * @param schedulerLoadScope  newer upstreams: {@code local}, {@code replica_synchronized}, or null
 * @param kvUsedBlocks        worker-reported KV occupancy
 */
public record ActiveLoad(
        long workerId,
        long dpRank,
        @Nullable Long activeDecodeBlocks,
        @Nullable Long activePrefillTokens,
        @Nullable String schedulerLoadScope,
        @Nullable Long kvUsedBlocks) {

    public ActiveLoad {
        if (dpRank < 0 || dpRank > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("dpRank: " + dpRank + " (expected: an unsigned 32-bit value)");
        }
        requireMagnitude("activeDecodeBlocks", activeDecodeBlocks);
        requireMagnitude("activePrefillTokens", activePrefillTokens);
        requireMagnitude("kvUsedBlocks", kvUsedBlocks);
    }

    private static void requireMagnitude(String field, @Nullable Long value) {
        if (value != null && value < 0) {
            throw new IllegalArgumentException(field + ": " + value + " (expected: >= 0, saturated at 2^63-1)");
        }
    }

    /** The decode backlog the picker uses: {@code active_decode_blocks}, else {@code kv_used_blocks}. */
    public @Nullable Long decodeBlocks() {
        return activeDecodeBlocks != null ? activeDecodeBlocks : kvUsedBlocks;
    }
}
