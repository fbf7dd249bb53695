package dev.continuum.router.load.wire;

import org.jspecify.annotations.Nullable;

/**
 * Dynamo's {@code ActiveLoad} sample (dynamo-wire.md 3.5). Unsigned 64-bit values are held in longs;
 * compare them with {@link Long#compareUnsigned}. A null field was nil (or absent) on the wire and exports
 * no metric series.
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
    }

    /** The decode backlog the picker uses: {@code active_decode_blocks}, else {@code kv_used_blocks}. */
    public @Nullable Long decodeBlocks() {
        return activeDecodeBlocks != null ? activeDecodeBlocks : kvUsedBlocks;
    }
}
