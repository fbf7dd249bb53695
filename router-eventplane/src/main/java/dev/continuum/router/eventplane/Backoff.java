package dev.continuum.router.eventplane;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Full-jitter exponential reconnect delays: attempt {@code n} waits a uniform random time between
 * {@code initial} and {@code min(max, initial * 2^n)}. The floor stays at {@code initial} so a flapping
 * publisher cannot drive a tight reconnect loop; the attempt count resets only after a session that lasted
 * {@code resetAfter}, so a peer that accepts and then refuses at once keeps backing off.
 */
public record Backoff(Duration initial, Duration max, Duration resetAfter) {
    /** 500ms..30s, reset after a 30s session (docs/load-signals.md). */
    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30),
            Duration.ofSeconds(30));

    public Backoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
        Objects.requireNonNull(resetAfter, "resetAfter");
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff: " + initial + ".." + max + " (expected: 0 < initial <= max)");
        }
    }

    /** The delay before attempt {@code attempt} (0 for the first retry). */
    public Duration delay(int attempt, RandomGenerator random) {
        long initialNanos = initial.toNanos();
        long ceiling = initialNanos;
        for (int i = 0; i < attempt && ceiling < max.toNanos(); i++) {
            ceiling = ceiling << 1;
        }
        ceiling = Math.min(ceiling, max.toNanos());
        long span = ceiling - initialNanos;
        return Duration.ofNanos(initialNanos + (span == 0 ? 0 : random.nextLong(span + 1)));
    }
}
