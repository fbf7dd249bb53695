package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.index.RadixIndex.StoreOutcome;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import org.junit.jupiter.api.Test;

/** The index's structure: prefixes by tokens_hash, ranks' engine hashes, contiguity, reference counts, ceilings. */
class RadixIndexTest {
    private static final long[] T = {101, 102, 103, 104, 105, 106};

    private final RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
    private final OverlapScores out = new OverlapScores(64);

    private static long[] engine(long base, int n) {
        long[] h = new long[n];
        for (int i = 0; i < n; i++) {
            h[i] = base + i;
        }
        return h;
    }

    private void find(long... tokens) {
        index.findMatches(new BlockHashes(16, tokens), out);
    }

    @Test
    void eachRankScoresItsLongestContiguousPrefixDeepestFirst() {
        int a = index.addRank(1, 0);
        int b = index.addRank(2, 0);
        int c = index.addRank(2, 1);
        assertThat(index.store(a, false, 0, engine(1000, 6), T, 0, 6)).isEqualTo(StoreOutcome.STORED);
        assertThat(index.store(b, false, 0, engine(2000, 2), T, 0, 2)).isEqualTo(StoreOutcome.STORED);
        // c holds blocks 0..3 through two events: the second one anchored at the first one's last engine hash.
        assertThat(index.store(c, false, 0, engine(3000, 2), T, 0, 2)).isEqualTo(StoreOutcome.STORED);
        assertThat(index.store(c, true, 3001, engine(3002, 4), T, 2, 2)).isEqualTo(StoreOutcome.STORED);
        assertThat(index.nodes()).isEqualTo(6);
        assertThat(index.ownerships()).isEqualTo(12);

        find(T);
        assertThat(out.size()).isEqualTo(3);
        assertThat(out.workerId(0)).isEqualTo(1);
        assertThat(out.matchedBlocks(0)).isEqualTo(6);
        assertThat(out.matchedBlocksOf(2, 1)).isEqualTo(4);
        assertThat(out.matchedBlocksOf(2, 0)).isEqualTo(2);
        assertThat(out.matchedBlocks(1)).isGreaterThanOrEqualTo(out.matchedBlocks(2));

        find(101, 102, 999, 104);
        assertThat(out.matchedBlocksOf(1, 0)).as("the match stops at the first block not held").isEqualTo(2);
        find(102, 103);
        assertThat(out.size()).as("a prefix starts at the first block").isZero();
    }

    @Test
    void aHoleInARanksChainEndsItsPrefixThere() {
        int a = index.addRank(1, 0);
        int b = index.addRank(2, 0);
        index.store(a, false, 0, engine(1000, 4), T, 0, 4);
        index.store(b, false, 0, engine(2000, 4), T, 0, 4);
        index.remove(b, new long[] {2001}, 0, 1); // b loses its second block, keeps the third and fourth
        find(T[0], T[1], T[2], T[3]);
        assertThat(out.matchedBlocksOf(1, 0)).isEqualTo(4);
        assertThat(out.matchedBlocksOf(2, 0)).isEqualTo(1);
    }

    @Test
    void twoEngineHashesOnOneNodeAreReferenceCounted() {
        int a = index.addRank(1, 0);
        index.store(a, false, 0, new long[] {10}, new long[] {T[0]}, 0, 1);
        index.store(a, false, 0, new long[] {11}, new long[] {T[0]}, 0, 1); // same tokens, another engine hash
        assertThat(index.nodes()).isEqualTo(1);
        assertThat(index.blocksOf(a)).isEqualTo(2);
        index.remove(a, new long[] {10}, 0, 1);
        find(T[0]);
        assertThat(out.matchedBlocksOf(1, 0)).as("still held through the other engine hash").isEqualTo(1);
        index.remove(a, new long[] {11, 11, 12}, 0, 3); // repeated and unknown hashes are ignored
        find(T[0]);
        assertThat(out.size()).isZero();
        assertThat(index.nodes()).isZero();
        assertThat(index.ownerships()).isZero();
    }

    @Test
    void aChainWhoseParentTheRankDoesNotHoldIsRefused() {
        int a = index.addRank(1, 0);
        assertThat(index.store(a, true, 12345, engine(1, 3), T, 0, 3)).isEqualTo(StoreOutcome.UNKNOWN_PARENT);
        assertThat(index.nodes()).isZero();
    }

    @Test
    void clearsAndDepartedRanksFreeEveryNodeAndIdsAreReused() {
        int a = index.addRank(1, 0);
        int b = index.addRank(2, 0);
        for (int round = 0; round < 50; round++) {
            index.store(a, false, 0, engine(round * 100L, 6), T, 0, 6);
            index.store(b, false, 0, engine(round * 100L + 50, 3), T, 0, 3);
            index.clearRank(a);
            index.removeRanks(new int[] {b}, 1);
            assertThat(index.nodes()).isZero();
            assertThat(index.ownerships()).isZero();
            b = index.addRank(2, 0);
        }
        find(T);
        assertThat(out.size()).isZero();
    }

    @Test
    void chainsLongerThanOneWriteSectionAreStoredAndRemovedWholeAndARefusalKeepsWhatCameBefore() {
        int n = 3 * RadixIndex.WRITE_SECTION_BLOCKS + 7;
        long[] tokens = engine(5_000, n);
        int a = index.addRank(1, 0);
        int b = index.addRank(2, 0);
        assertThat(index.store(a, false, 0, engine(10_000, n), tokens, 0, n)).isEqualTo(StoreOutcome.STORED);
        // The second event hangs off the first one's last block, and itself spans sections.
        long[] more = engine(50_000, n);
        long[] moreTokens = engine(90_000, n);
        assertThat(index.store(a, true, 10_000 + n - 1, more, moreTokens, 0, n)).isEqualTo(StoreOutcome.STORED);
        assertThat(index.store(b, false, 0, engine(20_000, n), tokens, 0, n)).isEqualTo(StoreOutcome.STORED);
        assertThat(index.nodes()).isEqualTo(2 * n);
        assertThat(index.blocksOf(a)).isEqualTo(2 * n);
        OverlapScores wide = new OverlapScores(64);
        long[] both = new long[2 * n];
        System.arraycopy(tokens, 0, both, 0, n);
        System.arraycopy(moreTokens, 0, both, n, n);
        index.findMatches(new BlockHashes(16, both), wide);
        assertThat(wide.matchedBlocksOf(1, 0)).isEqualTo(2 * n);
        assertThat(wide.matchedBlocksOf(2, 0)).isEqualTo(n);

        // Removing a's first chain, across sections: its second chain no longer hangs off a held block.
        index.remove(a, engine(10_000, n), 0, n);
        assertThat(index.blocksOf(a)).isEqualTo(n);
        index.findMatches(new BlockHashes(16, both), wide);
        assertThat(wide.matchedBlocksOf(1, 0)).isZero();
        assertThat(wide.matchedBlocksOf(2, 0)).isEqualTo(n);

        // Clearing b across sections releases its ownerships; its nodes stay as the path to a's second chain.
        index.clearRank(b);
        assertThat(index.blocksOf(b)).isZero();
        assertThat(index.nodes()).isEqualTo(2 * n);
        assertThat(index.ownerships()).isEqualTo(n);
        index.findMatches(new BlockHashes(16, both), wide);
        assertThat(wide.size()).isZero();
        index.findMatches(new BlockHashes(16, moreTokens), wide);
        assertThat(wide.size()).as("a's second chain no longer hangs off the root").isZero();
        index.clearRank(a);
        assertThat(index.nodes()).isZero();
        assertThat(index.ownerships()).isZero();
        assertThat(index.store(b, false, 0, engine(20_000, n), tokens, 0, n)).as("the cleared rank stores again")
                .isEqualTo(StoreOutcome.STORED);
        assertThat(index.ownerships()).isEqualTo(n);

        // A ceiling met in the third section: the first sections' blocks stay, as a refusal mid-chain always did.
        int limit = 2 * RadixIndex.WRITE_SECTION_BLOCKS + 5;
        RadixIndex capped = new RadixIndex(new IndexLimits(1 << 10, limit, 1 << 12, 8, 8, 8));
        int c = capped.addRank(3, 0);
        assertThat(capped.store(c, false, 0, engine(1, n), tokens, 0, n)).isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(capped.blocksOf(c)).isEqualTo(limit);
        capped.findMatches(new BlockHashes(16, tokens), wide);
        assertThat(wide.matchedBlocksOf(3, 0)).isEqualTo(limit);
    }

    @Test
    void everyCeilingRefusesPastCapacity() {
        RadixIndex small = new RadixIndex(new IndexLimits(4, 3, 6, 2, 8, 8));
        int a = small.addRank(1, 0);
        int b = small.addRank(2, 0);
        int c = small.addRank(3, 0);
        assertThat(small.store(a, false, 0, engine(10, 6), T, 0, 6)).isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(small.blocksOf(a)).as("blocks per rank").isEqualTo(3);
        assertThat(small.store(b, false, 0, engine(20, 2), T, 0, 2)).isEqualTo(StoreOutcome.STORED);
        assertThat(small.store(c, false, 0, engine(30, 1), T, 0, 1)).as("owners per node: a and b hold it")
                .isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(small.ownerships()).isEqualTo(5);
        small.clearRank(b);
        int d = small.addRank(4, 0);
        assertThat(small.store(c, false, 0, engine(30, 1), T, 0, 1)).isEqualTo(StoreOutcome.STORED);
        assertThat(small.store(d, false, 0, engine(40, 1), T, 0, 1)).as("owners per node: a and c hold it")
                .isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(small.store(d, false, 0, new long[] {1}, new long[] {900}, 0, 1)).isEqualTo(StoreOutcome.STORED);
        assertThat(small.nodes()).isEqualTo(4);
        assertThat(small.store(d, false, 0, new long[] {2}, new long[] {901}, 0, 1)).as("nodes")
                .isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(small.nodes()).isEqualTo(4);
        assertThat(small.ownerships()).isEqualTo(5);

        RadixIndex few = new RadixIndex(new IndexLimits(100, 100, 2, 10, 8, 8));
        int e = few.addRank(5, 0);
        assertThat(few.store(e, false, 0, engine(50, 3), T, 0, 3)).as("ownerships")
                .isEqualTo(StoreOutcome.OVER_CAPACITY);
        assertThat(few.ownerships()).isEqualTo(2);
    }

    @Test
    void aFullAnswerKeepsTheDeepestRanks() {
        OverlapScores two = new OverlapScores(2);
        for (int r = 0; r < 5; r++) {
            int rank = index.addRank(10 + r, 0);
            index.store(rank, false, 0, engine(r * 100L, r + 1), T, 0, r + 1);
        }
        index.findMatches(new BlockHashes(16, T), two);
        assertThat(two.size()).isEqualTo(2);
        assertThat(two.matchedBlocksOf(14, 0)).isEqualTo(5);
        assertThat(two.matchedBlocksOf(13, 0)).isEqualTo(4);
    }
}
