package dev.continuum.router.kv.index;

/**
 * An open-addressing map from {@code long} keys to non-negative {@code int} values (linear probing,
 * backward-shift deletion, so no tombstones accumulate under churn). No boxing: a key costs 12 bytes of
 * arrays at a load factor between 3/8 and 3/4. Single-threaded.
 */
final class LongIntMap {
    static final int MISSING = -1;
    private static final int MIN_CAPACITY = 16;

    private long[] keys;
    /** value + 1, so 0 marks an empty slot. */
    private int[] values;
    private int mask;
    private int size;

    LongIntMap() {
        this(MIN_CAPACITY);
    }

    LongIntMap(int expected) {
        int capacity = MIN_CAPACITY;
        while (capacity * 3L / 4 < expected) {
            capacity <<= 1;
        }
        keys = new long[capacity];
        values = new int[capacity];
        mask = capacity - 1;
    }

    int size() {
        return size;
    }

    /** The slot arrays' length (tests and memory accounting). */
    int capacity() {
        return keys.length;
    }

    static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    int get(long key) {
        long[] k = keys;
        int[] v = values;
        int m = mask;
        for (int i = slot(key, m); ; i = (i + 1) & m) {
            int stored = v[i];
            if (stored == 0) {
                return MISSING;
            }
            if (k[i] == key) {
                return stored - 1;
            }
        }
    }

    /** Maps {@code key} to {@code value} (>= 0); returns the previous value or {@link #MISSING}. */
    int put(long key, int value) {
        if (value < 0) {
            throw new IllegalArgumentException("value: " + value);
        }
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            int stored = values[i];
            if (stored == 0) {
                keys[i] = key;
                values[i] = value + 1;
                if (++size > keys.length * 3L / 4) {
                    resize(keys.length << 1);
                }
                return MISSING;
            }
            if (keys[i] == key) {
                values[i] = value + 1;
                return stored - 1;
            }
        }
    }

    /** Removes {@code key}; returns its value or {@link #MISSING}. */
    int remove(long key) {
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            int stored = values[i];
            if (stored == 0) {
                return MISSING;
            }
            if (keys[i] == key) {
                shiftBack(i);
                size--;
                return stored - 1;
            }
        }
    }

    private void shiftBack(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            if (values[i] == 0) {
                values[hole] = 0;
                return;
            }
            int home = slot(keys[i], mask);
            // Move the entry at i into the hole unless its home lies cyclically in (hole, i].
            boolean stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!stays) {
                keys[hole] = keys[i];
                values[hole] = values[i];
                hole = i;
            }
        }
    }

    /** Empties the map, shrinking it back to its smallest size when it had grown. */
    void clear() {
        if (keys.length > MIN_CAPACITY) {
            keys = new long[MIN_CAPACITY];
            values = new int[MIN_CAPACITY];
            mask = MIN_CAPACITY - 1;
        } else {
            java.util.Arrays.fill(values, 0);
        }
        size = 0;
    }

    /** Calls {@code action} for every entry; the map must not change meanwhile. */
    void forEach(Entry action) {
        long[] k = keys;
        int[] v = values;
        for (int i = 0; i < v.length; i++) {
            if (v[i] != 0) {
                action.accept(k[i], v[i] - 1);
            }
        }
    }

    /**
     * Calls {@code action} for at most {@code max} entries, in slot order from slot {@code start}; returns the slot
     * to continue from, or -1 once every entry was visited. The map must not change between calls.
     */
    int forEachFrom(int start, int max, Entry action) {
        long[] k = keys;
        int[] v = values;
        int visited = 0;
        for (int i = start; i < v.length; i++) {
            if (v[i] != 0) {
                if (visited == max) {
                    return i;
                }
                action.accept(k[i], v[i] - 1);
                visited++;
            }
        }
        return -1;
    }

    @FunctionalInterface
    interface Entry {
        void accept(long key, int value);
    }

    private void resize(int capacity) {
        long[] oldKeys = keys;
        int[] oldValues = values;
        keys = new long[capacity];
        values = new int[capacity];
        mask = capacity - 1;
        for (int i = 0; i < oldValues.length; i++) {
            if (oldValues[i] != 0) {
                int j = slot(oldKeys[i], mask);
                while (values[j] != 0) {
                    j = (j + 1) & mask;
                }
                keys[j] = oldKeys[i];
                values[j] = oldValues[i];
            }
        }
    }
}
