package dev.continuum.router.core.config;

import java.time.Duration;

/**
 * {@code circuit_breaker}: one three-state breaker per backend. Closed opens when, within
 * {@code window}, {@code failure_threshold} consecutive failures happen or, once
 * {@code minimum_requests} were seen, the failure rate reaches {@code failure_rate_threshold}.
 * Open lasts {@code timeout}, then half-open admits {@code half_open_max_requests} probes;
 * {@code half_open_success_threshold} successes close it, any failure reopens it.
 */
public record CircuitBreakerConfig(
        boolean enabled,
        int failureThreshold,
        double failureRateThreshold,
        int minimumRequests,
        Duration window,
        Duration timeout,
        int halfOpenMaxRequests,
        int halfOpenSuccessThreshold) {

    public static CircuitBreakerConfig defaults() {
        return new CircuitBreakerConfig(true, 5, 0.5, 10, Duration.ofSeconds(60), Duration.ofSeconds(60), 3, 2);
    }
}
