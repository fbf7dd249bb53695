package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The owner summary in each child slot (one bit per rank id below {@link RadixIndex#RANK_BITS}, an overflow bit
 * past them): lookups answer the same whichever walk they take, checked against a plain model of every rank's
 * blocks under random stores, removals, clears and departures, with fleets below and above 63 ranks.
 */
class RadixIndexRankBitsTest {
    private static final int CHAIN = 12;
    private static final int FAMILIES = 6;

    /** Each rank's engine hash -> the tokens_hash prefix (as a list) its block stands for. */
    private final Map<Integer, Map<Long, List<Long>>> model = new HashMap<>();

    @Test
    void aFleetWithinTheBitsAnswersLikeTheModel() {
        churnAndCompare(40, 1);
    }

    @Test
    void aFleetPastTheBitsAnswersLikeTheModel() {
        churnAndCompare(150, 2);
    }

    @Test
    void theOverflowBitFollowsTheLastOwnerPastTheBits() {
        RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
        int[] ranks = new int[70];
        for (int r = 0; r < ranks.length; r++) {
            ranks[r] = index.addRank(100 + r, 0);
        }
        long[] tokens = {7, 8};
        index.store(ranks[3], false, 0, new long[] {1, 2}, tokens, 0, 2);
        index.store(ranks[65], false, 0, new long[] {3, 4}, tokens, 0, 2);
        index.store(ranks[66], false, 0, new long[] {5}, tokens, 0, 1);
        OverlapScores out = new OverlapScores(8);
        index.findMatches(new BlockHashes(16, tokens), out);
        assertThat(out.matchedBlocksOf(103, 0)).isEqualTo(2);
        assertThat(out.matchedBlocksOf(165, 0)).isEqualTo(2);
        assertThat(out.matchedBlocksOf(166, 0)).isEqualTo(1);

        index.remove(ranks[65], new long[] {3, 4}, 0, 2); // 66 still past the bits on the first node
        index.findMatches(new BlockHashes(16, tokens), out);
        assertThat(out.size()).isEqualTo(2);
        assertThat(out.matchedBlocksOf(166, 0)).isEqualTo(1);
        assertThat(out.workerId(0)).as("deepest first").isEqualTo(103);

        index.clearRank(ranks[66]); // the bits alone describe both nodes again
        index.findMatches(new BlockHashes(16, tokens), out);
        assertThat(out.size()).isEqualTo(1);
        assertThat(out.matchedBlocksOf(103, 0)).isEqualTo(2);
    }

    private void churnAndCompare(int rankCount, long seed) {
        RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
        SplittableRandom random = new SplittableRandom(seed);
        long[][] families = new long[FAMILIES][CHAIN];
        for (int f = 0; f < FAMILIES; f++) {
            for (int i = 0; i < CHAIN; i++) {
                families[f][i] = 1_000L * (f + 1) + i;
            }
        }
        int[] ids = new int[rankCount];
        for (int r = 0; r < rankCount; r++) {
            ids[r] = index.addRank(r, 0);
            model.put(ids[r], new HashMap<>());
        }
        OverlapScores out = new OverlapScores(rankCount);
        long nextEngine = 1;
        for (int step = 0; step < 4_000; step++) {
            int r = random.nextInt(rankCount);
            int rank = ids[r];
            Map<Long, List<Long>> held = model.get(rank);
            int action = random.nextInt(10);
            if (action < 6) {
                long[] chain = families[random.nextInt(FAMILIES)];
                int n = random.nextInt(1, CHAIN + 1);
                long[] engine = new long[n];
                for (int i = 0; i < n; i++) {
                    engine[i] = nextEngine++;
                }
                assertThat(index.store(rank, false, 0, engine, chain, 0, n))
                        .isEqualTo(RadixIndex.StoreOutcome.STORED);
                for (int i = 0; i < n; i++) {
                    held.put(engine[i], prefix(chain, i + 1));
                }
            } else if (action < 9 && !held.isEmpty()) {
                List<Long> keys = new ArrayList<>(held.keySet());
                long victim = keys.get(random.nextInt(keys.size()));
                index.remove(rank, new long[] {victim}, 0, 1);
                held.remove(victim);
            } else if (random.nextBoolean()) {
                index.clearRank(rank);
                held.clear();
            } else {
                index.removeRanks(new int[] {rank}, 1);
                model.remove(rank);
                ids[r] = index.addRank(r, 0); // a departed worker's id is reused by the next one
                model.put(ids[r], new HashMap<>());
            }
            long[] query = families[random.nextInt(FAMILIES)];
            index.findMatches(new BlockHashes(16, query), out);
            for (int k = 0; k < rankCount; k++) {
                assertThat(out.matchedBlocksOf(k, 0)).as("rank %d at step %d", k, step)
                        .isEqualTo(expectedDepth(model.get(ids[k]), query));
            }
            for (int i = 1; i < out.size(); i++) {
                assertThat(out.matchedBlocks(i)).as("deepest first").isLessThanOrEqualTo(out.matchedBlocks(i - 1));
            }
        }
    }

    private static List<Long> prefix(long[] chain, int n) {
        List<Long> p = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            p.add(chain[i]);
        }
        return p;
    }

    /** The longest d such that the rank holds every prefix of {@code query} of length 1..d. */
    private static int expectedDepth(Map<Long, List<Long>> held, long[] query) {
        int d = 0;
        while (d < query.length && held.containsValue(prefix(query, d + 1))) {
            d++;
        }
        return d;
    }
}
