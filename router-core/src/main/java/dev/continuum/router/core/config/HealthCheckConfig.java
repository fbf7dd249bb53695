package dev.continuum.router.core.config;

import java.time.Duration;

/**
 * {@code health_checks}: active probes of each backend. A 200 counts as success, 503 as warming up
 * (probed every {@code warmup_check_interval}, unhealthy after {@code max_warmup_duration}), anything
 * else or no answer within {@code timeout} as a failure.
 */
public record HealthCheckConfig(
        boolean enabled,
        Duration interval,
        Duration timeout,
        int unhealthyThreshold,
        int healthyThreshold,
        String endpoint,
        Duration warmupCheckInterval,
        Duration maxWarmupDuration) {

    public static HealthCheckConfig defaults() {
        return new HealthCheckConfig(true, Duration.ofSeconds(30), Duration.ofSeconds(10), 3, 2, "/v1/models",
                Duration.ofSeconds(1), Duration.ofSeconds(300));
    }
}
