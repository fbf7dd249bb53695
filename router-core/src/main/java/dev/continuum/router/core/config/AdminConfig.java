package dev.continuum.router.core.config;

import org.jspecify.annotations.Nullable;

/**
 * {@code admin}: who may call {@code /admin/*}. With no {@code admin} section the admin API is
 * disabled (404) and startup says so; {@code method: none} opens it without credentials and warns.
 */
public record AdminConfig(boolean enabled, AuthMethod method, @Nullable Secret token,
                          @Nullable String username, @Nullable Secret password, @Nullable Secret apiKey) {
    public enum AuthMethod {
        NONE,
        /** {@code bearer_token} (alias {@code bearer}): {@code Authorization: Bearer <token>}. */
        BEARER_TOKEN,
        /** {@code Authorization: Basic base64(user:pass)}. */
        BASIC,
        /** {@code X-API-Key: <key>}. */
        API_KEY
    }

    public static AdminConfig disabled() {
        return new AdminConfig(false, AuthMethod.BEARER_TOKEN, null, null, null, null);
    }
}
