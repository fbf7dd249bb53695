package dev.continuum.router.core.config;

import java.time.Duration;

/**
 * {@code retry}: a request that fails to connect, or gets 502/503, is tried again on another
 * backend, never after a byte went to the client. {@code max_attempts} counts the first try.
 * The budget keeps retries at most {@code budget_ratio} of requests over a 10 s window, plus
 * {@code budget_min_per_second}, so a failing fleet is not hit with a retry storm.
 *
 * @param baseDelay          {@code base_delay} (alias {@code backoff}): the wait before the first retry; 0 = at once
 * @param maxDelay           {@code max_delay}: no wait is longer
 * @param exponentialBackoff {@code exponential_backoff}: the wait doubles with each retry
 * @param jitter             {@code jitter}: each wait is drawn uniformly from its upper half, so clients that
 *                           failed together do not retry together
 */
public record RetryConfig(
        boolean enabled,
        int maxAttempts,
        double budgetRatio,
        int budgetMinPerSecond,
        Duration baseDelay,
        Duration maxDelay,
        boolean exponentialBackoff,
        boolean jitter) {

    public static final Duration DEFAULT_MAX_DELAY = Duration.ofSeconds(30);

    /** A fixed {@code backoff} (no doubling, no jitter). */
    public RetryConfig(boolean enabled, int maxAttempts, double budgetRatio, int budgetMinPerSecond, Duration backoff) {
        this(enabled, maxAttempts, budgetRatio, budgetMinPerSecond, backoff, DEFAULT_MAX_DELAY, false, false);
    }

    public static RetryConfig defaults() {
        return new RetryConfig(true, 3, 0.2, 10, Duration.ZERO, DEFAULT_MAX_DELAY, true, true);
    }

    /**
     * The wait before retry number {@code retry} (1 = the first retry), in nanoseconds; {@code unit} is a
     * uniform draw in [0, 1) used only with {@code jitter}. Saturates instead of overflowing.
     */
    public long delayNanos(int retry, double unit) {
        long base = saturatedNanos(baseDelay);
        if (base <= 0) {
            return 0;
        }
        long cap = saturatedNanos(maxDelay);
        long d = base;
        if (exponentialBackoff) {
            int shift = Math.min(Math.max(retry - 1, 0), 62);
            d = base > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : base << shift;
        }
        d = Math.min(d, cap);
        if (jitter) {
            d = d / 2 + (long) ((d - d / 2) * Math.min(Math.max(unit, 0), 1));
        }
        return d;
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
