package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.index.PredictedBlocks.Outcome;
import dev.continuum.router.kv.index.RadixIndex.StoreOutcome;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The predicted cache: depth per rank, TTL and capacity (LRU) on an injected clock, confirmation, departures. */
class PredictedBlocksTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long[] T = {101, 102, 103, 104, 105, 106};

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final Map<Outcome, Long> counted = new EnumMap<>(Outcome.class);
    private final RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
    private final PredictedBlocks predicted = new PredictedBlocks(index.rootPath(), now::get,
            (outcome, blocks) -> counted.merge(outcome, blocks, Long::sum));
    private final PredictedOverlap overlap = new PredictedOverlap(index, predicted);
    private final OverlapScores out = new OverlapScores(64);

    private void find(long... tokens) {
        overlap.findMatches(new BlockHashes(16, tokens), out);
    }

    private static long[] prefix(int n) {
        return java.util.Arrays.copyOf(T, n);
    }

    private long count(Outcome o) {
        return counted.getOrDefault(o, 0L);
    }

    @Test
    void aPredictedRankMatchesItsContiguousPrefixUntilItsTtlPasses() {
        predicted.predict("ns", 1, 0, prefix(4), 5 * SECOND, 0);
        predicted.predict("ns", 2, 3, prefix(2), 5 * SECOND, 0);
        find(T);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(4);
        assertThat(out.matchedBlocksOf(2, 3)).isEqualTo(2);
        find(101, 102, 999, 104);
        assertThat(out.matchedBlocksOf(1, 0)).as("the match stops at the first block not predicted").isEqualTo(2);
        find(102, 103);
        assertThat(out.size()).as("a prefix starts at the first block").isZero();

        now.addAndGet(5 * SECOND);
        find(T);
        assertThat(out.matchedBlocksOf(1, 0)).as("at the TTL, still held").isEqualTo(4);
        now.addAndGet(1);
        find(T);
        assertThat(out.size()).as("past the TTL, gone").isZero();
        predicted.predict("ns", 3, 0, prefix(1), 5 * SECOND, 0);
        assertThat(count(Outcome.EXPIRED)).as("expired entries are swept by later predictions").isPositive();
        assertThat(count(Outcome.PREDICTED)).isEqualTo(7);
    }

    @Test
    void aNewPredictionRefreshesTheTtlOfTheBlocksItShares() {
        predicted.predict("ns", 1, 0, prefix(4), 5 * SECOND, 0);
        now.addAndGet(4 * SECOND);
        predicted.predict("ns", 1, 0, prefix(2), 5 * SECOND, 0);
        now.addAndGet(2 * SECOND);
        find(T);
        assertThat(out.matchedBlocksOf(1, 0)).as("blocks 0..1 refreshed, 2..3 expired").isEqualTo(2);
    }

    @Test
    void theDeeperOfIndexAndOverlayWinsPerRank() {
        int a = index.addRank(1, 0);
        index.store(a, false, 0, new long[] {11, 12}, T, 0, 2);
        int b = index.addRank(2, 0);
        index.store(b, false, 0, new long[] {21, 22, 23, 24, 25}, T, 0, 5);
        predicted.predict("ns", 1, 0, prefix(4), 5 * SECOND, 0);
        predicted.predict("ns", 2, 0, prefix(3), 5 * SECOND, 0);
        find(T);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(4);
        assertThat(out.matchedBlocksOf(2, 0)).isEqualTo(5);
    }

    @Test
    void aRankKeepsAtMostItsCapacityLeastRecentlyPredictedFirst() {
        predicted.predict("ns", 1, 0, new long[] {1, 2, 3}, 100 * SECOND, 4);
        now.addAndGet(SECOND);
        predicted.predict("ns", 1, 0, new long[] {7, 8}, 100 * SECOND, 4);
        assertThat(predicted.entries()).isEqualTo(4);
        assertThat(count(Outcome.EVICTED)).isEqualTo(1);
        find(1, 2, 3);
        assertThat(out.matchedBlocksOf(1, 0)).as("the older chain's tail went first; its prefix still matches")
                .isEqualTo(2);
        find(7, 8);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(2);

        // A prompt longer than the capacity is predicted as far as the capacity goes.
        predicted.predict("ns", 2, 0, new long[] {1, 2, 3, 4, 5, 6}, 100 * SECOND, 3);
        find(1, 2, 3, 4, 5, 6);
        assertThat(out.matchedBlocksOf(2, 0)).isEqualTo(3);
    }

    @Test
    void aPrefixPredictedManyTimesLeavesItsRanksOtherPredictionsUpToItsCapacity() {
        long capacity = 1024;
        long[] shared = new long[512];
        for (int i = 0; i < shared.length; i++) {
            shared[i] = 1_000_000L + i;
        }
        long[][] others = new long[16][32];
        for (int p = 0; p < others.length; p++) {
            for (int i = 0; i < 32; i++) {
                others[p][i] = (p + 1) * 10_000L + i;
            }
        }
        // A conversation's prefix predicted on every turn, with other prompts between: 1,024 live blocks, the
        // rank's capacity, behind 8,704 predictions of blocks (most of them refreshes).
        for (int turn = 0; turn < 16; turn++) {
            predicted.predict("ns", 1, 0, shared, 100 * SECOND, capacity);
            predicted.predict("ns", 1, 0, others[turn], 100 * SECOND, capacity);
        }
        predicted.predict("ns", 1, 0, shared, 100 * SECOND, capacity);
        assertThat(predicted.entries()).isEqualTo(1024);
        assertThat(count(Outcome.EVICTED)).as("refreshes never evict a live prediction").isZero();
        for (long[] other : others) {
            find(other);
            assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(32);
        }
        find(shared);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(512);
    }

    @Test
    void eightRanksEachKeepAFullEngineCacheOfPredictions() {
        // The KV replay's fleet: 8 ranks of 131,072 blocks (2 M tokens of 16-token blocks). The overlay used to hold
        // 262,144 predictions in all, a quarter of what these engines cache, and forgot prefixes they still held.
        int ranks = 8;
        long capacity = 131_072;
        long[] chain = new long[PredictedBlocks.MAX_BLOCKS_PER_PREDICTION];
        for (int r = 0; r < ranks; r++) {
            for (int p = 0; p < capacity / chain.length; p++) {
                for (int i = 0; i < chain.length; i++) {
                    chain[i] = (r * 100L + p) * 1_000_000L + i;
                }
                predicted.predict("ns", r, 0, chain, 100 * SECOND, capacity);
            }
        }
        assertThat(predicted.entries()).isEqualTo(ranks * (int) capacity);
        assertThat(count(Outcome.EVICTED) + count(Outcome.DROPPED)).isZero();
        for (int i = 0; i < chain.length; i++) {
            chain[i] = 1_000_000L + i; // rank 0's second prediction, among the first made
        }
        find(chain);
        assertThat(out.matchedBlocksOf(0, 0)).isEqualTo(chain.length);
    }

    @Test
    void storedKvEventsConfirmPredictionsWhichLeaveTheOverlay() {
        predicted.predict("ns", 1, 0, prefix(4), 5 * SECOND, 0);
        int a = index.addRank(1, 0);
        assertThat(index.store(a, false, 0, new long[] {11, 12}, T, 0, 2)).isEqualTo(StoreOutcome.STORED);
        predicted.confirm(1, 0, index.pathOf(a, false, 0, 0), T, 0, 2);
        assertThat(predicted.entries()).isEqualTo(2);
        assertThat(count(Outcome.CONFIRMED)).isEqualTo(2);
        // A chain anchored at its parent's engine hash confirms the blocks below that parent.
        assertThat(index.store(a, true, 12, new long[] {11, 12, 13}, T, 2, 1)).isEqualTo(StoreOutcome.STORED);
        predicted.confirm(1, 0, index.pathOf(a, true, 12, 0), T, 2, 1);
        assertThat(predicted.entries()).isEqualTo(1);
        find(T);
        assertThat(out.matchedBlocksOf(1, 0)).as("index 3 deep, overlay still holds the 4th").isEqualTo(4);
        // Another rank's events confirm nothing of this rank.
        predicted.confirm(9, 0, index.rootPath(), T, 0, 4);
        assertThat(predicted.entries()).isEqualTo(1);
    }

    @Test
    void aDepartedRankTakesItsPredictionsAlong() {
        predicted.predict("ns", 1, 0, prefix(4), 5 * SECOND, 0);
        predicted.predict("ns", 1, 1, prefix(3), 5 * SECOND, 0);
        predicted.predict("other", 2, 0, prefix(2), 5 * SECOND, 0);
        predicted.retain((ns, worker, rank) -> ns.equals("ns") && worker == 1 && rank == 0);
        assertThat(predicted.entries()).isEqualTo(4);
        assertThat(count(Outcome.DEPARTED)).isEqualTo(5);
        find(T);
        assertThat(out.size()).isEqualTo(1);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(4);
        // The freed rank ids are reused without mixing up owners.
        predicted.predict("ns", 3, 0, prefix(6), 5 * SECOND, 0);
        find(T);
        assertThat(out.matchedBlocksOf(3, 0)).isEqualTo(6);
        assertThat(out.matchedBlocksOf(1, 1)).isZero();
    }

    @Test
    void manyRanksSharingOnePrefixAllMatchAndDeletionsKeepProbeRunsWhole() {
        for (int w = 0; w < 300; w++) {
            predicted.predict("ns", w, 0, prefix(1 + w % 6), 5 * SECOND, 0);
        }
        OverlapScores wide = new OverlapScores(512);
        overlap.findMatches(new BlockHashes(16, T), wide);
        for (int w = 0; w < 300; w++) {
            assertThat(wide.matchedBlocksOf(w, 0)).isEqualTo(1 + w % 6);
        }
        predicted.retain((ns, worker, rank) -> worker % 2 == 0);
        overlap.findMatches(new BlockHashes(16, T), wide);
        for (int w = 0; w < 300; w++) {
            assertThat(wide.matchedBlocksOf(w, 0)).isEqualTo(w % 2 == 0 ? 1 + w % 6 : 0);
        }
    }

    @Test
    void theTableIsBoundedAndAFullTableDropsRatherThanGrows() {
        long[] chain = new long[PredictedBlocks.MAX_BLOCKS_PER_PREDICTION];
        int predictions = PredictedBlocks.MAX_ENTRIES / chain.length + 2;
        for (int p = 0; p < predictions; p++) {
            for (int i = 0; i < chain.length; i++) {
                chain[i] = p * 1_000_000L + i;
            }
            predicted.predict("ns", p, 0, chain, 100 * SECOND, 0);
        }
        assertThat(predicted.entries()).isLessThanOrEqualTo(PredictedBlocks.MAX_ENTRIES);
        assertThat(count(Outcome.DROPPED)).isPositive();
    }

    @Test
    void lookupsAllocateNothingAtSteadyState() {
        predicted.predict("ns", 1, 0, prefix(6), 5 * SECOND, 0);
        BlockHashes h = new BlockHashes(16, T);
        for (int i = 0; i < 10_000; i++) {
            overlap.findMatches(h, out);
        }
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            overlap.findMatches(h, out);
        }
        assertThat(mx.getCurrentThreadAllocatedBytes() - before).isLessThan(1024);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(6);
    }
}
