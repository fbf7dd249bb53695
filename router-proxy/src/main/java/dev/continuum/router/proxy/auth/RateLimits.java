package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.RateLimitingConfig;
import java.net.InetAddress;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory token buckets of {@code rate_limiting} plus each key's own {@code rate_limit}.
 *
 * <p>Tiers, checked in this order: the key's bucket ({@code api_keys[].rate_limit}, else
 * {@code limits.per_api_key}; only for requests with a router key), the client IP's bucket
 * ({@code per_client}), the global bucket, and, once a backend is chosen, that backend's bucket
 * ({@code per_backend}, one per backend). A key's own {@code rate_limit} applies even when
 * {@code rate_limiting.enabled} is false; the section's tiers only when it is true. Clients in
 * {@code whitelist} CIDRs and keys listed in {@code bypass_keys} (by id or value) skip every tier.
 * Unix-socket clients have no IP: they skip the per-client tier and the whitelist.
 */
public interface RateLimits {

    /**
     * Builds the limits of {@code config}; buckets of {@code previous} whose limit did not change
     * are carried over, so a reload does not hand every client a fresh burst.
     */
    static RateLimits create(RateLimitingConfig config, Iterable<ApiKeyConfig> keys, @Nullable RateLimits previous,
                             LongSupplier nanoClock, RateLimitLimits bounds) {
        return new BucketRateLimits(config, keys, previous, nanoClock, bounds);
    }

    /** Checks the key, client and global tiers; {@code client} is null on a unix socket. */
    RateDecision check(@Nullable InetAddress client, @Nullable ApiKeyConfig key);

    /** Takes a token from {@code backend}'s bucket; {@link RateDecision#ALLOW} when it has none. */
    RateDecision checkBackend(String backend);
}
