package dev.continuum.router.proxy.auth;

import dev.continuum.router.proxy.metrics.RateLimitTier;
import org.jspecify.annotations.Nullable;

/**
 * A rate-limit verdict. {@link #ALLOW} and {@link #BYPASS} are shared constants, so an admitted
 * request allocates nothing; only a refusal builds an instance.
 *
 * @param deniedBy          the tier that refused, or null when admitted
 * @param retryAfterSeconds whole seconds for {@code Retry-After} (at least 1) when refused, else 0
 * @param bypass            the client or key is exempt from every limit (whitelist, bypass key)
 */
public record RateDecision(@Nullable RateLimitTier deniedBy, long retryAfterSeconds, boolean bypass) {
    public static final RateDecision ALLOW = new RateDecision(null, 0, false);
    public static final RateDecision BYPASS = new RateDecision(null, 0, true);

    public boolean allowed() {
        return deniedBy == null;
    }

    static RateDecision denied(RateLimitTier tier, long waitNanos) {
        return new RateDecision(tier, TokenBucket.retryAfterSeconds(waitNanos), false);
    }
}
