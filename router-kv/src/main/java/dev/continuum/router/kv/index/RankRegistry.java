package dev.continuum.router.kv.index;

import java.util.Arrays;

/**
 * {@link RadixIndex}'s ranks, by small int id (freed ids are reused, so the ids a fleet uses stay below the
 * owner bits as long as it can): each rank's identity (worker, dp_rank), which readers read to answer, and its
 * map from engine {@code block_hash} to node id, which only the writer reads.
 */
final class RankRegistry {
    // Reader-visible identity.
    private long[] worker;
    private int[] dp;
    // Writer-only.
    private LongIntMap[] blocks;
    private int[] free;
    private int freeTop;
    private int next;

    RankRegistry(int capacity) {
        worker = new long[capacity];
        dp = new int[capacity];
        blocks = new LongIntMap[capacity];
        free = new int[capacity];
    }

    /** Worker id per rank id, for a reader to read once per walk. */
    long[] workers() {
        return worker;
    }

    /** dp_rank per rank id, for a reader to read once per walk. */
    int[] dpRanks() {
        return dp;
    }

    // Writer side only below.

    /** Ranks held (added and not yet freed). */
    int held() {
        return next - freeTop;
    }

    /** A rank id for (worker, dp_rank), with an empty block map. */
    int add(long workerId, int dpRank) {
        int id;
        if (freeTop > 0) {
            id = free[--freeTop];
        } else {
            id = next++;
            if (id == worker.length) {
                int n = id * 2;
                worker = Arrays.copyOf(worker, n);
                dp = Arrays.copyOf(dp, n);
                blocks = Arrays.copyOf(blocks, n);
            }
        }
        worker[id] = workerId;
        dp[id] = dpRank;
        if (blocks[id] == null) {
            blocks[id] = new LongIntMap();
        }
        return id;
    }

    /** Frees the id of a rank whose blocks are released; its (possibly large) map goes with it. */
    void free(int rank) {
        blocks[rank] = null;
        if (freeTop == free.length) {
            free = Arrays.copyOf(free, free.length * 2);
        }
        free[freeTop++] = rank;
    }

    /** The rank's engine block_hash → node map (null once the rank is freed). */
    LongIntMap blocks(int rank) {
        return blocks[rank];
    }

    /** Gives the rank a new empty map (the caller releases the old one's blocks in sections). */
    void resetBlocks(int rank) {
        blocks[rank] = new LongIntMap();
    }
}
