package dev.continuum.router.core.config;

/** A token bucket: refills {@code requestsPerSecond}, holds at most {@code burstCapacity}. */
public record RateLimit(double requestsPerSecond, int burstCapacity) {
    public RateLimit {
        if (!(requestsPerSecond > 0)) {
            throw new IllegalArgumentException("requests_per_second: " + requestsPerSecond + " (expected: > 0)");
        }
        if (burstCapacity < 1) {
            throw new IllegalArgumentException("burst_capacity: " + burstCapacity + " (expected: >= 1)");
        }
    }

    /** The newer Rust form: an integer of requests per minute, with a burst of the same size. */
    public static RateLimit perMinute(int requestsPerMinute) {
        return new RateLimit(requestsPerMinute / 60.0, Math.max(1, requestsPerMinute));
    }
}
