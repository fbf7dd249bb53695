package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code rate_limiting}: in-memory token buckets. Each tier is optional (null = unlimited).
 * {@code whitelist} holds CIDRs whose clients bypass every limit; {@code bypass_keys} the API key ids
 * (or key values) that do.
 */
@JsonPropertyOrder({"enabled", "limits", "whitelist", "bypass_keys"})
public record RateLimitingConfig(
        boolean enabled,
        @JsonIgnore @Nullable RateLimit perClient,
        @JsonIgnore @Nullable RateLimit perBackend,
        @JsonIgnore @Nullable RateLimit perApiKey,
        @JsonIgnore @Nullable RateLimit global,
        List<String> whitelist,
        List<Secret> bypassKeys) {

    public RateLimitingConfig {
        whitelist = List.copyOf(whitelist);
        bypassKeys = List.copyOf(bypassKeys);
    }

    /** The YAML groups the four limits under {@code limits}. */
    record Limits(@Nullable RateLimit perClient, @Nullable RateLimit perBackend, @Nullable RateLimit perApiKey,
                  @Nullable RateLimit global) {
    }

    @JsonProperty("limits")
    Limits limits() {
        return new Limits(perClient, perBackend, perApiKey, global);
    }

    public static RateLimitingConfig defaults() {
        return new RateLimitingConfig(false, null, null, null, null, List.of(), List.of());
    }
}
