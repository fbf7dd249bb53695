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

    /** @param capacity the most ranks one answer holds (a node has at most this many owners) */
    public OverlapScores(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1)");
        }
        workers = new long[capacity];
        ranks = new int[capacity];
        blocks = new int[capacity];
    }

    public void clear() {
        size = 0;
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
        return true;
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

    /** The matched depth of (worker, dp_rank), 0 when absent. Linear: answers hold few ranks. */
    public int matchedBlocksOf(long workerId, int dpRank) {
        for (int i = 0; i < size; i++) {
            if (workers[i] == workerId && ranks[i] == dpRank) {
                return blocks[i];
            }
        }
        return 0;
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
