package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One client key of {@code api_keys.api_keys} (or of {@code api_keys_file}).
 *
 * @param id              a stable, non-secret name for logs and metrics; defaults to {@code key-<index>}
 * @param allowedBackends empty = every backend
 * @param allowedModels   empty = every model
 * @param rateLimit       this key's own bucket, or null
 * @param expiresAt       after this instant the key is refused as if unknown
 */
@JsonPropertyOrder({"key", "id", "name", "user_id", "organization_id", "scopes", "rate_limit", "enabled", "expires_at",
    "allowed_backends", "allowed_models"})
public record ApiKeyConfig(
        Secret key,
        String id,
        @Nullable String name,
        @Nullable String userId,
        @Nullable String organizationId,
        List<String> scopes,
        List<String> allowedBackends,
        List<String> allowedModels,
        @Nullable RateLimit rateLimit,
        boolean enabled,
        @Nullable Instant expiresAt) {

    public ApiKeyConfig {
        scopes = List.copyOf(scopes);
        allowedBackends = List.copyOf(allowedBackends);
        allowedModels = List.copyOf(allowedModels);
    }

    public boolean usableAt(Instant now) {
        return enabled && (expiresAt == null || now.isBefore(expiresAt));
    }
}
