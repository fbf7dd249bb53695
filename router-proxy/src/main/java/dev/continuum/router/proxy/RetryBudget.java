package dev.continuum.router.proxy;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Caps retries at {@code ratio} x requests over a sliding 10 s window, plus
 * {@code minPerSecond} retries per second of the window (Finagle's retry budget), so a failing
 * fleet is never hit by a retry storm. Ten one-second buckets per counter; each bucket is one
 * {@code long} packing (second << 32 | count), so resetting a stale bucket and counting are a
 * single compare-and-set. Concurrent callers may overshoot the cap by their number: acceptable for
 * a budget.
 */
final class RetryBudget {
    static final int WINDOW_SECONDS = 10;

    private final double ratio;
    private final int minPerSecond;
    private final LongSupplier nanoClock;
    private final long origin;
    private final AtomicLongArray requests = new AtomicLongArray(WINDOW_SECONDS);
    private final AtomicLongArray retries = new AtomicLongArray(WINDOW_SECONDS);

    RetryBudget(double ratio, int minPerSecond, LongSupplier nanoClock) {
        this.ratio = ratio;
        this.minPerSecond = minPerSecond;
        this.nanoClock = nanoClock;
        this.origin = nanoClock.getAsLong();
        // Stamp every bucket as "long ago" so an empty bucket never counts.
        for (int i = 0; i < WINDOW_SECONDS; i++) {
            requests.set(i, pack(-WINDOW_SECONDS - 1, 0));
            retries.set(i, pack(-WINDOW_SECONDS - 1, 0));
        }
    }

    boolean sameSettings(double otherRatio, int otherMin) {
        return ratio == otherRatio && minPerSecond == otherMin;
    }

    void onRequest() {
        add(requests, second());
    }

    /** Takes one retry from the budget; false when the budget is spent. */
    boolean tryRetry() {
        long sec = second();
        long allowed = (long) Math.floor(ratio * sum(requests, sec)) + (long) minPerSecond * WINDOW_SECONDS;
        if (sum(retries, sec) + 1 > allowed) {
            return false;
        }
        add(retries, sec);
        return true;
    }

    private long second() {
        return (nanoClock.getAsLong() - origin) / 1_000_000_000L;
    }

    private static long pack(long sec, long count) {
        return (sec << 32) | (count & 0xFFFF_FFFFL);
    }

    private static void add(AtomicLongArray buckets, long sec) {
        int i = (int) Math.floorMod(sec, (long) WINDOW_SECONDS);
        for (;;) {
            long v = buckets.get(i);
            long next = (v >> 32) == sec ? v + 1 : pack(sec, 1);
            if (buckets.compareAndSet(i, v, next)) {
                return;
            }
        }
    }

    private static long sum(AtomicLongArray buckets, long sec) {
        long total = 0;
        for (int i = 0; i < WINDOW_SECONDS; i++) {
            long v = buckets.get(i);
            long age = sec - (v >> 32);
            if (age >= 0 && age < WINDOW_SECONDS) {
                total += v & 0xFFFF_FFFFL;
            }
        }
        return total;
    }
}
