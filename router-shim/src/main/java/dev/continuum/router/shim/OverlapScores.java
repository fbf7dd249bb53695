package dev.continuum.router.shim;

import java.util.Arrays;

/**
 * One lookup's answer from {@link PrefixOverlap}: up to {@link #capacity()} ranks, each with the number of
 * leading request blocks it holds. Mutable and reused by one thread across requests (the picker keeps one per
 * thread), so a lookup allocates nothing; not thread-safe.
 */
public final class OverlapScores {
    private final long[] workers;
    private final int[] ranks;
    private final int[] blocks;
    private int size;
    /**
     * An open-addressing index from (worker, rank) to position + 1, built on the first lookup after a change
     * and valid while {@code indexedStamp == stamp}; entries of older stamps count as empty, so clearing
     * costs nothing.
     */
    private final int[] slots;
    private final int[] slotStamps;
    private int stamp = 1;
    private int indexedStamp;

    /** @param capacity the most ranks one answer holds (a node has at most this many owners) */
    public OverlapScores(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1)");
        }
        workers = new long[capacity];
        ranks = new int[capacity];
        blocks = new int[capacity];
        int tableSize = Integer.highestOneBit(Math.max(1, capacity - 1)) << 2;
        slots = new int[tableSize];
        slotStamps = new int[tableSize];
    }

    public void clear() {
        size = 0;
        changed();
    }

    private void changed() {
        if (++stamp == 0) { // wrapped after 2^32 changes: forget every stamp once
            java.util.Arrays.fill(slotStamps, 0);
            stamp = 1;
        }
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return workers.length;
    }

    /**
     * Adds a rank's match depth. Returns false, adding nothing, when the answer is full; callers add the
     * deepest matches first, so what is dropped is the shallowest.
     */
    public boolean add(long workerId, int dpRank, int matchedBlocks) {
        if (size == workers.length) {
            return false;
        }
        workers[size] = workerId;
        ranks[size] = dpRank;
        blocks[size] = Math.max(0, matchedBlocks);
        size++;
        changed();
        return true;
    }

    /**
     * Raises (worker, dp_rank)'s depth to {@code matchedBlocks} when it is deeper than what the answer holds, or
     * adds the rank; false when it is absent and the answer is full. For a second source of matches (the router's
     * predicted cache) merged into an index's answer. Linear in the answer's size; allocates nothing.
     */
    public boolean raise(long workerId, int dpRank, int matchedBlocks) {
        for (int i = 0; i < size; i++) {
            if (workers[i] == workerId && ranks[i] == dpRank) {
                if (matchedBlocks > blocks[i]) {
                    blocks[i] = matchedBlocks;
                    changed();
                }
                return true;
            }
        }
        return add(workerId, dpRank, matchedBlocks);
    }

    public long workerId(int i) {
        checkIndex(i);
        return workers[i];
    }

    public int dpRank(int i) {
        checkIndex(i);
        return ranks[i];
    }

    public int matchedBlocks(int i) {
        checkIndex(i);
        return blocks[i];
    }

    /**
     * The matched depth of (worker, dp_rank), 0 when absent. Constant time: the first lookup after a change
     * indexes the answer (linear in its size), so a picker scoring n candidates against m matches does
     * O(n + m) work rather than O(n * m). Allocates nothing.
     */
    public int matchedBlocksOf(long workerId, int dpRank) {
        if (size <= LINEAR_SCAN) {
            for (int i = 0; i < size; i++) {
                if (workers[i] == workerId && ranks[i] == dpRank) {
                    return blocks[i];
                }
            }
            return 0;
        }
        if (indexedStamp != stamp) {
            index();
        }
        int mask = slots.length - 1;
        for (int h = hash(workerId, dpRank) & mask; slotStamps[h] == stamp; h = (h + 1) & mask) {
            int i = slots[h] - 1;
            if (workers[i] == workerId && ranks[i] == dpRank) {
                return blocks[i];
            }
        }
        return 0;
    }

    /** Answers this small are scanned rather than indexed. */
    private static final int LINEAR_SCAN = 8;

    private void index() {
        int mask = slots.length - 1;
        for (int i = 0; i < size; i++) {
            int h = hash(workers[i], ranks[i]) & mask;
            while (slotStamps[h] == stamp) {
                h = (h + 1) & mask;
            }
            slotStamps[h] = stamp;
            slots[h] = i + 1;
        }
        indexedStamp = stamp;
    }

    private static int hash(long workerId, int dpRank) {
        long h = (workerId ^ ((long) dpRank << 32 | (dpRank & 0xFFFF_FFFFL))) * 0x9E37_79B9_7F4A_7C15L;
        return (int) (h ^ (h >>> 29));
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
    }

    @Override
    public String toString() {
        return "OverlapScores[size=" + size + ", blocks=" + Arrays.toString(Arrays.copyOf(blocks, size)) + "]";
    }
}
