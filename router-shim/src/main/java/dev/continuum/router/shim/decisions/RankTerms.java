package dev.continuum.router.shim.decisions;


/**
 * One candidate rank's terms in one phase of a decision (docs/kv-routing.md names the formula). Counts the rank
 * did not report are -1; a cost that was not defined (the rank sat out) is null in JSON.
 *
 * @param workerId         the worker's instance ID (never its address)
 * @param dpRank           the data-parallel rank
 * @param sampleBacklog    the phase's backlog from the rank's fresh kv_metrics sample, -1 without one
 * @param ledgerTokens     unanswered prompt tokens the router's own dispatch ledger holds for the rank
 * @param ledgerBlocks     unanswered KV blocks the ledger holds for the rank
 * @param activeSequences  this router's active sequences on the rank for the phase's field (uncached prompt tokens
 *                         for a prefill phase, blocks otherwise); -1 where the rank had no cost
 * @param overlapBlocks    leading prompt blocks the KV index says the rank holds (0 without a KV term)
 * @param blockSize        the block size the rank was scored with
 * @param creditedPrefill  the prefill credit the overlap earned, in blocks ({@code overlap_score_credit * overlap})
 * @param adjustedPrefill  the prefill term after the credit, in blocks, before {@code prefill_load_scale}
 * @param decodeBlocks     the decode term, in blocks (backlog plus this request's uncached blocks)
 * @param state            {@code fresh}, {@code quiet}, {@code silent} (no cost) or {@code stalled}
 * @param cost             the formula's cost, NaN when the rank had none
 * @param eligible         whether the rank could win this phase
 */
public record RankTerms(
        long workerId,
        int dpRank,
        long sampleBacklog,
        long ledgerTokens,
        long ledgerBlocks,
        long activeSequences,
        int overlapBlocks,
        long blockSize,
        double creditedPrefill,
        double adjustedPrefill,
        double decodeBlocks,
        String state,
        double cost,
        boolean eligible) {
    /**
     * What one candidate weighs in a kept record, for the ring's byte bound: a record holds its candidates packed
     * ({@link CandidateTerms}: 96 bytes each, plus two array headers a phase), so this is an upper estimate; the
     * instance a reader asks for is built then and not kept.
     */
    public static final int ESTIMATED_BYTES = 120;

}
