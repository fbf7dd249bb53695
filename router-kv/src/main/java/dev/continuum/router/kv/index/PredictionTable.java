package dev.continuum.router.kv.index;

import org.jspecify.annotations.Nullable;

/**
 * The open-addressing table under {@link PredictedBlocks}: (path key, rank id) entries with the time each was last
 * predicted, linear probing, deleted by backward shift so every probe run stays contiguous and a lookup stops at the
 * first empty slot. Allocated on the first prediction and doubled while more than half full, up to its largest size.
 *
 * <p>Writers hold the overlay's write lock. Readers walk the arrays under the overlay's optimistic stamp: the fields
 * are plain, and a reader that sees old and new arrays mixed (a doubling in between) fails its stamp and retries.
 */
final class PredictionTable {
    private final int firstSlots;
    private final int maxSlots;

    // Null until the first prediction; read directly by the overlay's walk.
    long @Nullable [] keys;
    int @Nullable [] owners; // owner id + 1; 0: empty slot
    long @Nullable [] stamps;
    volatile int size;

    PredictionTable(int firstSlots, int maxSlots) {
        this.firstSlots = firstSlots;
        this.maxSlots = maxSlots;
    }

    /** Allocates the first arrays. */
    void ensure() {
        if (keys == null) {
            keys = new long[firstSlots];
            owners = new int[firstSlots];
            stamps = new long[firstSlots];
        }
    }

    /** The slot holding (path, o), or -1. */
    int slotOf(long path, int o) {
        long[] k = keys;
        int[] own = owners;
        if (k == null || own == null) {
            return -1;
        }
        int mask = k.length - 1;
        for (int s = home(path, mask), probes = 0; own[s] != 0 && probes < k.length; s = (s + 1) & mask, probes++) {
            if (k[s] == path && own[s] == o + 1) {
                return s;
            }
        }
        return -1;
    }

    long stampAt(int slot) {
        long[] st = stamps;
        return st == null ? Long.MIN_VALUE : st[slot];
    }

    void restamp(int slot, long stamp) {
        long[] st = stamps;
        if (st != null) {
            st[slot] = stamp;
        }
    }

    /** Adds (path, o) at {@code stamp}; the caller checked it is absent and that the entry bound leaves room. */
    void insert(long path, int o, long stamp) {
        ensure();
        growIfNeeded();
        long[] k = keys;
        int[] own = owners;
        long[] st = stamps;
        if (k == null || own == null || st == null) {
            return;
        }
        int mask = k.length - 1;
        int s = home(path, mask);
        while (own[s] != 0) {
            s = (s + 1) & mask;
        }
        k[s] = path;
        st[s] = stamp;
        own[s] = o + 1;
        size = size + 1;
    }

    /** Backward-shift deletion of the entry in {@code slot}. */
    void delete(int slot) {
        long[] k = keys;
        int[] own = owners;
        long[] st = stamps;
        if (k == null || own == null || st == null) {
            return;
        }
        int mask = k.length - 1;
        int hole = slot;
        for (int j = (slot + 1) & mask; own[j] != 0; j = (j + 1) & mask) {
            int home = home(k[j], mask);
            // j may move into the hole when its home is not cyclically in (hole, j].
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                k[hole] = k[j];
                own[hole] = own[j];
                st[hole] = st[j];
                hole = j;
            }
        }
        own[hole] = 0;
        size = size - 1;
    }

    /**
     * Doubles the table when one more entry would fill it past half, up to its largest size: a small fleet, or a
     * precise one whose predictions last seconds, never pays for the largest.
     */
    private void growIfNeeded() {
        long[] k = keys;
        int[] own = owners;
        long[] st = stamps;
        if (k == null || own == null || st == null || (size + 1L) * 2 <= k.length || k.length >= maxSlots) {
            return;
        }
        int slots = k.length * 2;
        long[] nk = new long[slots];
        int[] nown = new int[slots];
        long[] nst = new long[slots];
        int mask = slots - 1;
        for (int i = 0; i < k.length; i++) {
            if (own[i] != 0) {
                int s = home(k[i], mask);
                while (nown[s] != 0) {
                    s = (s + 1) & mask;
                }
                nk[s] = k[i];
                nown[s] = own[i];
                nst[s] = st[i];
            }
        }
        keys = nk;
        owners = nown;
        stamps = nst;
    }

    static int home(long path, int mask) {
        long h = path * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & mask;
    }
}
