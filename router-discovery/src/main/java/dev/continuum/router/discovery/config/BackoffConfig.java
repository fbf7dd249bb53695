package dev.continuum.router.discovery.config;

import java.time.Duration;
import java.util.Objects;

/** {@code watch_reconnect_backoff}: the delay between passes doubles from {@code initial} up to {@code max}. */
public record BackoffConfig(Duration initial, Duration max) {
    public static final Duration DEFAULT_INITIAL = Duration.ofMillis(500);
    public static final Duration DEFAULT_MAX = Duration.ofSeconds(30);

    public BackoffConfig {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
    }

    public static BackoffConfig defaults() {
        return new BackoffConfig(DEFAULT_INITIAL, DEFAULT_MAX);
    }
}
