package dev.continuum.router.core.config;

import java.time.Duration;

/**
 * {@code retry}: a request that fails to connect, or gets 502/503, is tried again on another
 * backend, never after a byte went to the client. {@code max_attempts} counts the first try.
 * The budget keeps retries at most {@code budget_ratio} of requests over a 10 s window, plus
 * {@code budget_min_per_second}, so a failing fleet is not hit with a retry storm.
 */
public record RetryConfig(
        boolean enabled,
        int maxAttempts,
        double budgetRatio,
        int budgetMinPerSecond,
        Duration backoff) {

    public static RetryConfig defaults() {
        return new RetryConfig(true, 3, 0.2, 10, Duration.ZERO);
    }
}
