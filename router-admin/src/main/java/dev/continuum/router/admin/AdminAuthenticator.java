package dev.continuum.router.admin;

import dev.continuum.router.core.config.AdminConfig;
import dev.continuum.router.core.config.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether one admin call may proceed, from the live {@link AdminConfig} (read per call, so
 * a reloaded token applies to the next request). Every comparison of a credential is constant-time
 * ({@link Secret#matches}); a missing and a wrong credential get the same answer.
 */
public final class AdminAuthenticator {
    /** The outcome of one check; {@code principal} names the method that succeeded, for the audit line. */
    public record Decision(Verdict verdict, String principal) {
    }

    public enum Verdict {
        ALLOWED,
        /** No {@code admin} section: the admin API does not exist (404). */
        DISABLED,
        UNAUTHORIZED
    }

    private final Supplier<AdminConfig> config;

    public AdminAuthenticator(Supplier<AdminConfig> config) {
        this.config = config;
    }

    /**
     * @param authorization the {@code Authorization} header, or null
     * @param apiKey        the {@code X-API-Key} header, or null
     */
    public Decision check(@Nullable String authorization, @Nullable String apiKey) {
        AdminConfig admin = config.get();
        if (!admin.enabled()) {
            return new Decision(Verdict.DISABLED, "-");
        }
        return switch (admin.method()) {
            case NONE -> new Decision(Verdict.ALLOWED, "anonymous");
            case BEARER_TOKEN -> bearer(admin.token(), authorization);
            case BASIC -> basic(admin.username(), admin.password(), authorization);
            case API_KEY -> apiKey(admin.apiKey(), apiKey);
        };
    }

    private static Decision bearer(@Nullable Secret token, @Nullable String authorization) {
        String presented = credentialAfter("bearer", authorization);
        if (token != null && presented != null && token.matches(presented)) {
            return new Decision(Verdict.ALLOWED, "bearer");
        }
        return new Decision(Verdict.UNAUTHORIZED, "bearer");
    }

    private static Decision basic(@Nullable String username, @Nullable Secret password,
                                  @Nullable String authorization) {
        String encoded = credentialAfter("basic", authorization);
        if (encoded == null || username == null || password == null) {
            return new Decision(Verdict.UNAUTHORIZED, "basic");
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return new Decision(Verdict.UNAUTHORIZED, "basic");
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return new Decision(Verdict.UNAUTHORIZED, "basic");
        }
        // Both halves are compared, always, so timing does not tell which one was wrong.
        boolean userOk = Secret.of(username).matches(decoded.substring(0, colon));
        boolean passOk = password.matches(decoded.substring(colon + 1));
        return new Decision(userOk & passOk ? Verdict.ALLOWED : Verdict.UNAUTHORIZED, "basic");
    }

    private static Decision apiKey(@Nullable Secret key, @Nullable String presented) {
        if (key != null && presented != null && key.matches(presented.trim())) {
            return new Decision(Verdict.ALLOWED, "api_key");
        }
        return new Decision(Verdict.UNAUTHORIZED, "api_key");
    }

    /** The credential after a case-insensitive scheme word, or null when the header uses another scheme. */
    private static @Nullable String credentialAfter(String scheme, @Nullable String header) {
        if (header == null) {
            return null;
        }
        String trimmed = header.trim();
        int space = trimmed.indexOf(' ');
        if (space <= 0 || !trimmed.substring(0, space).toLowerCase(Locale.ROOT).equals(scheme)) {
            return null;
        }
        String credential = trimmed.substring(space + 1).trim();
        return credential.isEmpty() ? null : credential;
    }
}
