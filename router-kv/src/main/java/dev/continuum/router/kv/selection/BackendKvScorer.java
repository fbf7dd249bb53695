package dev.continuum.router.kv.selection;

import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.proxy.BackendChooser;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Scores a request's available candidates by the prefix each holds against its load, as the KV-aware picker scores
 * ranks (docs/kv-routing.md, "Use in selection"):
 *
 * <pre>
 *   cost = prefill_load_scale × max(0, prompt blocks − overlap_score_credit × cached blocks)
 *        + in-flight requests × prompt blocks
 * </pre>
 *
 * where cached blocks is the candidate's leading run of the prompt's chained block hashes in the
 * {@link BackendKvIndex} (0 for a candidate without a source), and each request this router has in flight to it
 * counts as a prompt of this one's size (the decode term: the KV those requests hold). The lowest cost wins; a tie
 * goes to the larger cached prefix, then round in turn. Lock-free and allocation-free: one walk of the prompt
 * through the index's inverted view for all candidates, then one slot lookup per candidate.
 */
public final class BackendKvScorer {
    /** Per thread (event loops): the depth of each index slot for the prompt being scored. */
    private static final ThreadLocal<int[]> DEPTHS = ThreadLocal.withInitial(() -> new int[BackendKvIndex.MAX_SLOTS]);

    private final BackendKvIndex index;
    private final AtomicInteger start = new AtomicInteger();

    public BackendKvScorer(BackendKvIndex index) {
        this.index = index;
    }

    /**
     * The choice among {@code available} (non-empty): the chosen index in the low 32 bits and its cached blocks in
     * the high 32.
     *
     * @param prompt the prompt's chained block hashes, boxed ({@link BackendKvIndex#keys})
     */
    public long choose(List<? extends BackendChooser.Candidate> available, Long[] prompt, double overlapCredit,
            double prefillScale) {
        int[] depths = DEPTHS.get();
        index.prefixDepths(prompt, depths);
        int n = available.size();
        int offset = n == 1 ? 0 : Math.floorMod(start.getAndIncrement(), n);
        int blocks = prompt.length;
        double unit = Math.max(1, blocks);
        int best = 0;
        int bestCached = 0;
        double bestCost = Double.POSITIVE_INFINITY;
        for (int k = 0; k < n; k++) {
            int i = offset + k < n ? offset + k : offset + k - n;
            BackendChooser.Candidate c = available.get(i);
            int slot = index.slot(c.name());
            int cached = slot < 0 ? 0 : depths[slot];
            double cost = prefillScale * Math.max(0, blocks - overlapCredit * cached) + c.inFlight() * unit;
            if (cost < bestCost || (cost == bestCost && cached > bestCached)) {
                best = i;
                bestCost = cost;
                bestCached = cached;
            }
        }
        return ((long) bestCached << 32) | best;
    }
}
