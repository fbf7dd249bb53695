package dev.continuum.router.kv.hash;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The keys a cache has seen once, for its admission rule: a value is cached the second time its key comes, not the
 * first. A stream of prompts that never repeat (single-shot API traffic, a client sending unique text on purpose)
 * then costs one table write per key: it neither fills the cache with entries nobody reads again nor evicts the
 * entries that do repeat.
 *
 * <p>A fixed table of 64-bit fingerprints indexed by the key's low bits (the keys are a strong hash already), sized
 * at construction and never grown. Lossy on purpose: a later key may take an earlier one's slot, which only delays
 * that key's admission by one more sighting; two threads racing on one slot lose a sighting, never a value. No
 * lock.
 */
public final class Sightings {
    private final AtomicLongArray slots;
    private final int mask;

    /** @param slots the table's size, a power of two (8 bytes each) */
    public Sightings(int slots) {
        if (slots < 1 || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two: " + slots);
        }
        this.slots = new AtomicLongArray(slots);
        this.mask = slots - 1;
    }

    /** Records {@code key}; true when it was recorded before and its slot still holds it. */
    public boolean sawBefore(ByteBoundedCache.Key key) {
        int i = slot(key);
        long fingerprint = fingerprint(key);
        if (slots.getPlain(i) == fingerprint) {
            return true;
        }
        slots.setOpaque(i, fingerprint);
        return false;
    }

    /** Whether {@code key} was recorded and its slot still holds it (records nothing). */
    public boolean contains(ByteBoundedCache.Key key) {
        return slots.getPlain(slot(key)) == fingerprint(key);
    }

    /** The table's size in slots. */
    public int capacity() {
        return mask + 1;
    }

    private int slot(ByteBoundedCache.Key key) {
        return (int) (key.lo() ^ (key.lo() >>> 32)) & mask;
    }

    /** Never 0, the empty slot. */
    private static long fingerprint(ByteBoundedCache.Key key) {
        return key.hi() | 1L;
    }
}
