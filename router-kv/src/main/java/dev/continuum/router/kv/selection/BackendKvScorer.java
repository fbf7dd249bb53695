package dev.continuum.router.kv.selection;

import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.proxy.BackendChooser;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Scores a request's available candidates by the prefix each holds against its load, as the KV-aware picker scores
 * ranks (docs/kv-routing.md, "Use in selection"):
 *
 * <pre>
 *   cost = prefill_load_scale × max(0, prompt blocks − overlap_score_credit × cached blocks)
 *        + in-flight requests × uncached blocks per request
 * </pre>
 *
 * where cached blocks is the candidate's leading run of the prompt's chained block hashes in the
 * {@link BackendKvIndex} (0 for a candidate without a source), and each request this router has in flight to it
 * stands for the prefill work a request sent there recently carried: a moving average of the uncached blocks of
 * the requests this scorer sent to that backend (each new one weighs 1/8), or this prompt's blocks before it has
 * one. The KV-aware picker's load term is a rank's queued prefill; the router sees only a count of requests, and
 * counting each as a whole prompt of this one's size made a backend holding the prefix lose to any idle backend as
 * soon as it had one request in flight, whatever that request's size or cache hit. The lowest cost wins; a tie
 * goes to the larger cached prefix, then round in turn. Lock-free and allocation-free: one walk of the prompt
 * through the index's inverted view for all candidates, then one slot lookup per candidate.
 */
public final class BackendKvScorer {
    /** Per thread (event loops): the depth of each index slot for the prompt being scored. */
    private static final ThreadLocal<int[]> DEPTHS = ThreadLocal.withInitial(() -> new int[BackendKvIndex.MAX_SLOTS]);

    /** Weight of a new request in a backend's average of uncached blocks per request. */
    private static final double NEW_REQUEST_WEIGHT = 1.0 / 8;
    /** No average yet: {@code Double.doubleToRawLongBits} of NaN is never a sample's bits. */
    private static final long NO_AVERAGE = Double.doubleToRawLongBits(Double.NaN);

    private final BackendKvIndex index;
    private final AtomicInteger start = new AtomicInteger();
    /**
     * Per index slot, the moving average of the uncached blocks of the requests sent there, as double bits. Updated
     * by plain reads and writes from any event loop: a lost update only delays the average.
     */
    private final AtomicLongArray uncachedPerRequest = new AtomicLongArray(BackendKvIndex.MAX_SLOTS);
    /**
     * Per index slot, the backend its average belongs to: the index gives a departed backend's slot to the next one,
     * whose requests must not inherit the old average (a name that differs reads as no average, and the next
     * update starts the slot's average afresh).
     */
    private final AtomicReferenceArray<@Nullable String> averageOf = new AtomicReferenceArray<>(BackendKvIndex.MAX_SLOTS);

    public BackendKvScorer(BackendKvIndex index) {
        this.index = index;
        for (int i = 0; i < BackendKvIndex.MAX_SLOTS; i++) {
            uncachedPerRequest.set(i, NO_AVERAGE);
        }
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
        int bestSlot = -1;
        double bestCost = Double.POSITIVE_INFINITY;
        for (int k = 0; k < n; k++) {
            int i = offset + k < n ? offset + k : offset + k - n;
            BackendChooser.Candidate c = available.get(i);
            int slot = index.slot(c.name());
            int cached = slot < 0 ? 0 : depths[slot];
            double perRequest = slot < 0 ? unit : average(slot, c.name());
            double load = c.inFlight() == 0 ? 0 : c.inFlight() * (Double.isNaN(perRequest) ? unit : perRequest);
            double cost = prefillScale * Math.max(0, blocks - overlapCredit * cached) + load;
            if (cost < bestCost || (cost == bestCost && cached > bestCached)) {
                best = i;
                bestCost = cost;
                bestCached = cached;
                bestSlot = slot;
            }
        }
        if (bestSlot >= 0) {
            String owner = available.get(best).name();
            double before = average(bestSlot, owner);
            double sample = blocks - bestCached;
            uncachedPerRequest.set(bestSlot, Double.doubleToRawLongBits(Double.isNaN(before) ? sample
                    : before + NEW_REQUEST_WEIGHT * (sample - before)));
            if (Double.isNaN(before)) {
                averageOf.set(bestSlot, owner); // after the value: the slot's new backend never reads the old one's
            }
        }
        return ((long) bestCached << 32) | best;
    }

    /** The slot's average of uncached blocks per request, or NaN when it has none for {@code backend}. */
    private double average(int slot, String backend) {
        return backend.equals(averageOf.get(slot)) ? Double.longBitsToDouble(uncachedPerRequest.get(slot)) : Double.NaN;
    }
}
