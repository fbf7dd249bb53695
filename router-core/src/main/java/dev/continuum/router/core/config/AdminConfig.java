package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.jspecify.annotations.Nullable;

/**
 * {@code admin}: who may call {@code /admin/*}. With no {@code admin} section the admin API is
 * disabled (404) and startup says so; {@code method: none} opens it without credentials and warns.
 */
@JsonPropertyOrder({"enabled", "auth"})
public record AdminConfig(boolean enabled, @JsonIgnore AuthMethod method, @JsonIgnore @Nullable Secret token,
                          @JsonIgnore @Nullable String username, @JsonIgnore @Nullable Secret password,
                          @JsonIgnore @Nullable Secret apiKey) {
    public enum AuthMethod {
        NONE,
        /** {@code bearer_token} (alias {@code bearer}): {@code Authorization: Bearer <token>}. */
        BEARER_TOKEN,
        /** {@code Authorization: Basic base64(user:pass)}. */
        BASIC,
        /** {@code X-API-Key: <key>}. */
        API_KEY
    }

    /** The YAML groups the credentials under {@code auth}. */
    record Auth(AuthMethod method, @Nullable Secret token, @Nullable String username, @Nullable Secret password,
                @Nullable Secret apiKey) {
    }

    @JsonProperty("auth")
    Auth auth() {
        return new Auth(method, token, username, password, apiKey);
    }

    public static AdminConfig disabled() {
        return new AdminConfig(false, AuthMethod.BEARER_TOKEN, null, null, null, null);
    }
}
