package dev.continuum.router.shim;

/**
 * The KV-aware cost formulas, in blocks (lower is better), over fleet counters already read as magnitudes
 * ({@link LoadCosts#magnitude}); see {@code docs/kv-routing.md}. They follow upstream's
 * {@code worker_logit} (ai-dynamo/dynamo, {@code lib/kv-router/src/scheduling/selector.rs} at commit
 * 01690d42e3b9) without the host/disk tiers, the credit decay and the taint multiplier, which this router has
 * no signal for.
 */
final class KvCosts {
    /** Upstream's default bypass bound on the uncached prompt tokens (its {@code eff_isl_threshold}). */
    static final long BYPASS_MAX_UNCACHED_TOKENS = 2048;
    /** Upstream's default bypass bound on uncached / prompt tokens (its {@code eff_isl_ratio_threshold}). */
    static final double BYPASS_MAX_UNCACHED_SHARE = 0.7;

    private KvCosts() {
    }

    /**
     * The full formula for a prefill (or aggregated) rank:
     * {@code prefill_load_scale * max(0, (prefill backlog + isl) / bs - credit * overlap)
     * + decode backlog + max(0, ceil(isl / bs) - overlap)}. The prefill term counts every prompt token once
     * (the uncached ones and the cached ones, as upstream does) and the credit takes the cached ones back.
     *
     * @param prefillTokens active prefill tokens plus unanswered ones (0 for a quiet rank)
     * @param decodeBlocks  active decode blocks plus unanswered ones (0 for a quiet rank)
     * @param isl           the rendered prompt's tokens
     * @param blockSize     the rank's {@code kv_cache_block_size}, {@code > 0}
     * @param overlap       leading prompt blocks the rank holds
     */
    static double full(long prefillTokens, long decodeBlocks, long isl, long blockSize, int overlap,
            KvPickerSettings s) {
        double rawPrefillBlocks = (double) LoadCosts.add(LoadCosts.magnitude(prefillTokens), isl) / blockSize;
        double adjusted = Math.max(0, rawPrefillBlocks - s.overlapScoreCredit() * overlap);
        return s.prefillLoadScale() * adjusted + decode(decodeBlocks, isl, blockSize, overlap);
    }

    /** {@code decode backlog + max(0, ceil(isl / bs) - overlap)}: the blocks the rank would hold after admission. */
    static double decode(long decodeBlocks, long isl, long blockSize, int overlap) {
        long requestBlocks = LoadCosts.ceilDiv(isl, blockSize);
        return (double) LoadCosts.add(LoadCosts.magnitude(decodeBlocks), Math.max(0, requestBlocks - overlap));
    }

    /**
     * Conditional disaggregation's decode score: {@code max(0, decode(...) - credit * overlap)}, so a decode
     * worker that already holds the prompt is preferred while its backlog still counts.
     */
    static double conditionalDecode(long decodeBlocks, long isl, long blockSize, int overlap, KvPickerSettings s) {
        return Math.max(0, decode(decodeBlocks, isl, blockSize, overlap) - s.overlapScoreCredit() * overlap);
    }

    /**
     * With no fresh backlog anywhere, ranks compete on overlap and request size alone:
     * {@code isl / bs - credit * overlap}.
     */
    static double withoutLoad(long isl, long blockSize, int overlap, KvPickerSettings s) {
        return (double) isl / blockSize - s.overlapScoreCredit() * overlap;
    }

    /**
     * Whether a decode worker holding {@code overlap} leading blocks should prefill the request itself: the
     * uncached tokens are fewer than {@link #BYPASS_MAX_UNCACHED_TOKENS} and less than
     * {@link #BYPASS_MAX_UNCACHED_SHARE} of the prompt (upstream's default policy).
     */
    static boolean mostlyCached(long isl, long blockSize, int overlap) {
        // overlap < 2^31 and blockSize <= 65536 (the KV pipeline's bound), so the product fits a long.
        long cached = Math.min(isl, (long) Math.max(0, overlap) * blockSize);
        long uncached = isl - cached;
        return uncached < BYPASS_MAX_UNCACHED_TOKENS && (double) uncached / Math.max(isl, 1) < BYPASS_MAX_UNCACHED_SHARE;
    }
}
