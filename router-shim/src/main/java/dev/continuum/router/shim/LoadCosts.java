package dev.continuum.router.shim;

/**
 * The load-only cost formulas (Dynamo's load-only normalizations, see {@code docs/request-path.md}) over
 * fleet-supplied counters, saturating. Every counter is a u64 on the wire; the decoder already caps it at
 * {@link Long#MAX_VALUE}, and a negative long reaching here is read the same way (as a value too large for a
 * long), so an out-of-range report is always the largest cost and never wraps into the smallest.
 */
final class LoadCosts {
    private LoadCosts() {
    }

    /** (prefill backlog + unanswered prompt tokens) / max_num_batched_tokens; NaN without a capacity. */
    static double prefill(long activePrefillTokens, long pendingTokens, double maxBatchedTokens) {
        return add(magnitude(activePrefillTokens), magnitude(pendingTokens)) / maxBatchedTokens;
    }

    /**
     * (decode blocks + unanswered blocks + the request's own blocks) / total_kv_blocks; NaN without a
     * capacity.
     *
     * @param promptBlocks {@link #ceilDiv}(estimated prompt tokens, block size), computed by the caller once
     *                     per block size rather than once per candidate
     */
    static double decode(long decodeBlocks, long pendingBlocks, long promptBlocks, double totalKvBlocks) {
        return add(add(magnitude(decodeBlocks), magnitude(pendingBlocks)), magnitude(promptBlocks))
                / totalKvBlocks;
    }

    /**
     * A phase's backlog from the three sources the pickers have (docs/kv-routing.md, "The formula"): the fresh
     * sample's counter plus the dispatches no sample answered yet (the ledger) that are still active, or this
     * router's active sequences on the rank, whichever is larger. Each source is a lower bound on what the rank
     * holds: the sample lags the dispatches, the active sequences omit other routers' requests; their sum would
     * count the same requests twice. The ledger alone would also count a request that came and went between two
     * samples until the next one, charging a rank for work it has finished (the rank a conversation's next turn
     * should go to, typically): the unanswered dispatches still running are at most the active ones.
     */
    static long backlog(long sampled, long unanswered, long active) {
        long running = Math.min(magnitude(unanswered), magnitude(active));
        return Math.max(add(magnitude(sampled), running), magnitude(active));
    }

    /** {@code a + b} for non-negative operands, {@link Long#MAX_VALUE} when the sum does not fit. */
    static long add(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** {@code ceil(a / b)} for {@code a >= 0, b > 0}, without the overflow of {@code (a + b - 1) / b}. */
    static long ceilDiv(long a, long b) {
        long q = a / b;
        return q * b == a ? q : q + 1;
    }

    /** A counter held in a long as a magnitude: a negative value is a u64 above {@link Long#MAX_VALUE}. */
    static long magnitude(long counter) {
        return counter < 0 ? Long.MAX_VALUE : counter;
    }
}
