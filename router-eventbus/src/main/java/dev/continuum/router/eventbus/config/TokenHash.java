package dev.continuum.router.eventbus.config;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.continuum.router.core.config.MaskedInReadback;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The SHA-256 digest of a bus token, written {@code sha256:<64 lowercase hex>}. Only the digest is ever
 * configured or kept: a leaked config file or heap dump does not hand out a usable token. The config readback
 * masks it like a secret all the same (a digest still lets a guessed or leaked token be confirmed offline).
 */
public final class TokenHash implements MaskedInReadback {
    public static final String PREFIX = "sha256:";
    private static final int DIGEST_BYTES = 32;

    private final byte[] digest;

    private TokenHash(byte[] digest) {
        this.digest = digest;
    }

    /** Parses {@code sha256:<64 lowercase hex>}; empty for anything else (upper case included, so one spelling exists). */
    public static Optional<TokenHash> parse(String text) {
        if (!text.startsWith(PREFIX) || text.length() != PREFIX.length() + 2 * DIGEST_BYTES) {
            return Optional.empty();
        }
        for (int i = PREFIX.length(); i < text.length(); i++) {
            char c = text.charAt(i);
            if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f')) {
                return Optional.empty();
            }
        }
        return Optional.of(new TokenHash(HexFormat.of().parseHex(text, PREFIX.length(), text.length())));
    }

    /** The hash of a presented token (the UTF-8 bytes of the bearer value). */
    public static TokenHash of(String token) {
        return new TokenHash(sha256(token.getBytes(StandardCharsets.UTF_8)));
    }

    /** Constant-time comparison: the time taken does not depend on how many leading bytes agree. */
    public boolean matches(TokenHash presented) {
        return MessageDigest.isEqual(digest, presented.digest);
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public String revealedValue() {
        return toString();
    }

    @JsonValue
    @Override
    public String toString() {
        return PREFIX + HexFormat.of().formatHex(digest);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TokenHash t && MessageDigest.isEqual(digest, t.digest);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(digest);
    }
}
