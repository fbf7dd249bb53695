package dev.continuum.router.core.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * A credential from configuration (API key, token, password, private key path). {@link #toString()}
 * is masked so a secret can never reach a log line or a readback by accident; callers that need
 * the value ask for it with {@link #reveal()}, and compare with {@link #matches(String)}, which
 * runs in constant time.
 */
public final class Secret {
    /** What every readback shows in place of a secret's value. */
    public static final String MASK = "********";

    private final String value;

    private Secret(String value) {
        this.value = value;
    }

    public static Secret of(String value) {
        return new Secret(Objects.requireNonNull(value, "value"));
    }

    /** The clear value: only for the code that sends or checks the credential. */
    public String reveal() {
        return value;
    }

    /** Constant-time comparison, so response timing does not leak a prefix of the secret. */
    public boolean matches(String candidate) {
        return MessageDigest.isEqual(
                value.getBytes(StandardCharsets.UTF_8), candidate.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Secret s && MessageDigest.isEqual(
                value.getBytes(StandardCharsets.UTF_8), s.value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return MASK;
    }
}
