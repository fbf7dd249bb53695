package dev.continuum.router.shim;

/**
 * How many active sequences of one rank hold each block hash: an open-addressing map from hash to count with
 * linear probing and backward-shift deletion, so a block shared by concurrent requests counts once (as upstream's
 * {@code ActiveSequences.unique_blocks} does, ai-dynamo/dynamo {@code lib/kv-router/src/sequence.rs}). Used by
 * one thread at a time (the sequence drainer); grows by doubling and falls back to its initial size once empty,
 * so retaining and releasing allocate nothing at steady state.
 */
final class BlockRefCounts {
    private static final int INITIAL = 64;

    private long[] keys = new long[INITIAL];
    /** 0: empty slot (a hash is removed when its count reaches 0). */
    private int[] counts = new int[INITIAL];
    private int size;

    /** Adds one holder of {@code hash}; true when no other held it (a new unique block). */
    boolean retain(long hash) {
        if ((size + 1) * 2 > keys.length) {
            resize(keys.length * 2);
        }
        int mask = keys.length - 1;
        for (int i = spread(hash) & mask; ; i = (i + 1) & mask) {
            if (counts[i] == 0) {
                keys[i] = hash;
                counts[i] = 1;
                size++;
                return true;
            }
            if (keys[i] == hash) {
                if (counts[i] != Integer.MAX_VALUE) {
                    counts[i]++;
                }
                return false;
            }
        }
    }

    /** Removes one holder of {@code hash}; true when none is left (the block no longer counts). */
    boolean release(long hash) {
        int mask = keys.length - 1;
        for (int i = spread(hash) & mask; counts[i] != 0; i = (i + 1) & mask) {
            if (keys[i] == hash) {
                if (--counts[i] > 0) {
                    return false;
                }
                size--;
                shiftBack(i, mask);
                if (size == 0 && keys.length > INITIAL) {
                    keys = new long[INITIAL];
                    counts = new int[INITIAL];
                }
                return true;
            }
        }
        return false; // not held: nothing to release
    }

    /** Distinct hashes held. */
    int size() {
        return size;
    }

    private void shiftBack(int hole, int mask) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            if (counts[i] == 0) {
                counts[hole] = 0;
                return;
            }
            int home = spread(keys[i]) & mask;
            // Move the entry at i into the hole unless its home lies cyclically in (hole, i].
            boolean stays = hole <= i ? hole < home && home <= i : hole < home || home <= i;
            if (!stays) {
                keys[hole] = keys[i];
                counts[hole] = counts[i];
                hole = i;
            }
        }
    }

    private void resize(int capacity) {
        long[] oldKeys = keys;
        int[] oldCounts = counts;
        keys = new long[capacity];
        counts = new int[capacity];
        int mask = capacity - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldCounts[j] != 0) {
                int i = spread(oldKeys[j]) & mask;
                while (counts[i] != 0) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                counts[i] = oldCounts[j];
            }
        }
    }

    private static int spread(long hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
