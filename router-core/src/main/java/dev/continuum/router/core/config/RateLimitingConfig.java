package dev.continuum.router.core.config;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code rate_limiting}: in-memory token buckets. Each tier is optional (null = unlimited).
 * {@code whitelist} holds CIDRs whose clients bypass every limit; {@code bypass_keys} the API key ids
 * (or key values) that do.
 */
public record RateLimitingConfig(
        boolean enabled,
        @Nullable RateLimit perClient,
        @Nullable RateLimit perBackend,
        @Nullable RateLimit perApiKey,
        @Nullable RateLimit global,
        List<String> whitelist,
        List<Secret> bypassKeys) {

    public RateLimitingConfig {
        whitelist = List.copyOf(whitelist);
        bypassKeys = List.copyOf(bypassKeys);
    }

    public static RateLimitingConfig defaults() {
        return new RateLimitingConfig(false, null, null, null, null, List.of(), List.of());
    }
}
