package dev.continuum.router.proxy.auth;

/**
 * Bounds on rate-limit state that untrusted clients could otherwise grow.
 *
 * @param maxClientBuckets how many per-client-IP buckets are kept; beyond it the least recently
 *                         used generation of buckets is dropped (a dropped client restarts full)
 */
public record RateLimitLimits(int maxClientBuckets) {
    public static final RateLimitLimits DEFAULT = new RateLimitLimits(100_000);

    public RateLimitLimits {
        if (maxClientBuckets < 2) {
            throw new IllegalArgumentException("maxClientBuckets: " + maxClientBuckets + " (expected: >= 2)");
        }
    }
}
