package dev.continuum.router.kv.index;

/**
 * {@link RadixIndex}'s child links: one open-addressing table keyed by each child's path key (see {@link #step}),
 * linear probing, at most 3/4 full, no tombstones.
 *
 * <p>Slot i is three adjacent longs: {@code slots[3i]} = the child's path key, {@code slots[3i+1]} = {@code
 * parent id << 32 | child id} (0 = empty: the root is never a child) and {@code slots[3i+2]} = the child's owner
 * summary ({@link RadixIndex#RANK_BITS}). A lookup step reads one slot, whose place it computes from the request
 * alone. The writer mutates the table; readers read {@link #slots()} once per walk (growing replaces the array)
 * and probe it with {@link #probe}, which stays bounded however the table changes under them.
 */
final class ChildTable {
    static final int SLOT = 3;

    private long[] slots;
    private int mask;
    /** Linked children: one per live node but the root. */
    private int size;

    ChildTable(int capacity) {
        slots = new long[SLOT * capacity];
        mask = capacity - 1;
    }

    /** The current slot array, for a reader to read once per walk (its capacity is {@code length / SLOT}). */
    long[] slots() {
        return slots;
    }

    /**
     * The path key of a parent's child: a bijective 64-bit mix (so two children of one parent never share a
     * key). A lookup computes every step's key from the request alone, so the slot each step reads does not
     * depend on what the previous step read and the processor can fetch several steps' slots at once.
     */
    static long step(long parentPath, long tokensHash) {
        long z = parentPath ^ tokensHash;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static int home(long path, int mask) {
        return (int) (path ^ (path >>> 32)) & mask;
    }

    /**
     * A reader's lookup of {@code node}'s child at {@code path} in a table it read once: the slot, or -1. Bounded
     * by the table's size, so a table the writer is changing cannot hold a reader in the loop.
     */
    static int probe(long[] table, int mask, long path, int node) {
        for (int i = home(path, mask), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            long link = table[SLOT * i + 1];
            if (link == 0) {
                return -1;
            }
            if (table[SLOT * i] == path && (int) (link >>> 32) == node) {
                return i;
            }
        }
        return -1;
    }

    // Writer side only below.

    /** {@code parent}'s child at {@code path}, or 0 (the root, never a child) when there is none. */
    int find(int parent, long path) {
        long[] table = slots;
        for (int i = home(path, mask); ; i = (i + 1) & mask) {
            long link = table[SLOT * i + 1];
            if (link == 0) {
                return 0;
            }
            if (table[SLOT * i] == path && (int) (link >>> 32) == parent) {
                return (int) link;
            }
        }
    }

    /** Links new child {@code id} of {@code parent} at {@code path}, with no owners; grows past 3/4 full. */
    void link(int parent, int id, long path) {
        size++;
        if (size > (mask + 1) / 4 * 3) {
            rehash((mask + 1) * 2);
        }
        int i = home(path, mask);
        while (slots[SLOT * i + 1] != 0) {
            i = (i + 1) & mask;
        }
        slots[SLOT * i] = path;
        slots[SLOT * i + 1] = ((long) parent << 32) | id;
        slots[SLOT * i + 2] = 0;
    }

    /** Sets {@code bits} in the owner summary of linked {@code node} (whose path key is {@code path}). */
    void addOwnerBits(int node, long path, long bits) {
        slots[SLOT * slotOf(node, path) + 2] |= bits;
    }

    /** Clears {@code bits} in the owner summary of linked {@code node}. */
    void clearOwnerBits(int node, long path, long bits) {
        slots[SLOT * slotOf(node, path) + 2] &= ~bits;
    }

    /** The slot of linked {@code node}. */
    private int slotOf(int node, long path) {
        long[] table = slots;
        int i = home(path, mask);
        while ((int) table[SLOT * i + 1] != node) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** Removes linked {@code node}'s slot, shifting later entries of its probe run back (no tombstones). */
    void unlink(int node, long path) {
        long[] table = slots;
        int hole = slotOf(node, path);
        int i = hole;
        size--;
        while (true) {
            i = (i + 1) & mask;
            long link = table[SLOT * i + 1];
            if (link == 0) {
                table[SLOT * hole + 1] = 0;
                table[SLOT * hole] = 0;
                table[SLOT * hole + 2] = 0;
                return;
            }
            int home = home(table[SLOT * i], mask);
            boolean stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!stays) {
                table[SLOT * hole] = table[SLOT * i];
                table[SLOT * hole + 1] = link;
                table[SLOT * hole + 2] = table[SLOT * i + 2];
                hole = i;
            }
        }
    }

    private void rehash(int capacity) {
        long[] old = slots;
        long[] table = new long[SLOT * capacity];
        int m = capacity - 1;
        for (int j = 0; j < old.length; j += SLOT) {
            long link = old[j + 1];
            if (link != 0) {
                int i = home(old[j], m);
                while (table[SLOT * i + 1] != 0) {
                    i = (i + 1) & m;
                }
                table[SLOT * i] = old[j];
                table[SLOT * i + 1] = link;
                table[SLOT * i + 2] = old[j + 2];
            }
        }
        mask = m;
        slots = table;
    }
}
