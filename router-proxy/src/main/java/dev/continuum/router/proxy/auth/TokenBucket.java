package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.RateLimit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lock-free token bucket, implemented as GCRA (the generic cell rate algorithm): one
 * {@link AtomicLong} holds the theoretical arrival time of the next request, so taking a token is
 * one compare-and-set and never allocates. Equivalent to a bucket that refills
 * {@code requestsPerSecond} and holds {@code burstCapacity}: a fresh bucket admits
 * {@code burstCapacity} requests at once, then one every {@code 1/requestsPerSecond}.
 */
public final class TokenBucket {
    private final RateLimit limit;
    /** Time one token takes to refill; at least 1 ns. */
    private final long emissionIntervalNanos;
    /** How far ahead of now the arrival time may run: {@code (burst - 1)} intervals. */
    private final long toleranceNanos;
    private final AtomicLong theoreticalArrival;

    public TokenBucket(RateLimit limit, long nowNanos) {
        this.limit = limit;
        this.emissionIntervalNanos = Math.max(1L, Math.round(1_000_000_000d / limit.requestsPerSecond()));
        this.toleranceNanos = saturatedMultiply(emissionIntervalNanos, limit.burstCapacity() - 1L);
        this.theoreticalArrival = new AtomicLong(nowNanos);
    }

    public RateLimit limit() {
        return limit;
    }

    /** Takes one token: returns 0 when granted, else the nanoseconds until one will be available. */
    public long tryAcquire(long nowNanos) {
        for (;;) {
            long current = theoreticalArrival.get();
            // Comparisons by difference: nanoTime values may be negative or wrap.
            long start = current - nowNanos > 0 ? current : nowNanos;
            long wait = (start - nowNanos) - toleranceNanos;
            if (wait > 0) {
                return wait;
            }
            if (theoreticalArrival.compareAndSet(current, start + emissionIntervalNanos)) {
                return 0;
            }
        }
    }

    /** Whole seconds to put in {@code Retry-After} for a wait: rounded up, at least 1. */
    public static long retryAfterSeconds(long waitNanos) {
        return Math.max(1L, (waitNanos + 999_999_999L) / 1_000_000_000L);
    }

    private static long saturatedMultiply(long a, long b) {
        long r = a * b;
        return (a != 0 && (r / a != b)) ? Long.MAX_VALUE / 4 : r;
    }
}
