package dev.continuum.router.shim;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * A bounded lock-free multi-producer multi-consumer queue over a preallocated array (Dmitry Vyukov's bounded
 * MPMC design: each cell carries the position it is next valid for, so producers and consumers claim positions
 * with one compare-and-set and never wait on each other). Offering and polling allocate nothing; a full ring
 * refuses the offer instead of growing.
 */
final class BoundedRing<T> {
    private final int mask;
    private final AtomicLongArray turns;
    private final AtomicReferenceArray<@Nullable T> cells;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong head = new AtomicLong();

    /** @param capacity a power of two */
    BoundedRing(int capacity) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: a power of two >= 2)");
        }
        mask = capacity - 1;
        turns = new AtomicLongArray(capacity);
        cells = new AtomicReferenceArray<>(capacity);
        for (int i = 0; i < capacity; i++) {
            turns.set(i, i);
        }
    }

    /** Appends {@code value}; false when the ring is full. */
    boolean offer(T value) {
        long pos = tail.get();
        while (true) {
            int at = (int) pos & mask;
            long diff = turns.get(at) - pos;
            if (diff == 0) {
                if (tail.compareAndSet(pos, pos + 1)) {
                    cells.lazySet(at, value);
                    turns.set(at, pos + 1);
                    return true;
                }
                pos = tail.get();
            } else if (diff < 0) {
                return false;
            } else {
                pos = tail.get();
            }
        }
    }

    /** Takes the oldest value, or null when the ring is empty (or its oldest offer is still being written). */
    @Nullable T poll() {
        long pos = head.get();
        while (true) {
            int at = (int) pos & mask;
            long diff = turns.get(at) - (pos + 1);
            if (diff == 0) {
                if (head.compareAndSet(pos, pos + 1)) {
                    T value = cells.get(at);
                    cells.lazySet(at, null);
                    turns.set(at, pos + mask + 1);
                    return value;
                }
                pos = head.get();
            } else if (diff < 0) {
                return null;
            } else {
                pos = head.get();
            }
        }
    }

    /** Values held, approximately (exact when nothing is offered or polled meanwhile). */
    int size() {
        long n = tail.get() - head.get();
        return (int) Math.max(0, Math.min(n, mask + 1L));
    }

    int capacity() {
        return mask + 1;
    }
}
