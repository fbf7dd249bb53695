package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.ApiKeysConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ApiKeyAuthenticator} over an immutable map from each key's SHA-256 digest to its entry.
 * The map's equality is constant-time over the digests, so lookup timing says nothing about how
 * much of a presented key matched; digests are computed with one {@link MessageDigest} per thread.
 */
final class DigestApiKeyAuthenticator implements ApiKeyAuthenticator {
    private static final Logger log = LoggerFactory.getLogger(DigestApiKeyAuthenticator.class);
    static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");
    private static final AuthResult MISSING = new AuthResult.Rejected("Missing API key. Send it as "
            + "'Authorization: Bearer <key>' or 'x-api-key: <key>'.");
    private static final AuthResult INVALID = new AuthResult.Rejected("Invalid API key.");
    private static final FastThreadLocal<MessageDigest> SHA256 = new FastThreadLocal<>() {
        @Override
        protected MessageDigest initialValue() throws NoSuchAlgorithmException {
            return MessageDigest.getInstance("SHA-256");
        }
    };

    private final boolean blocking;
    private final boolean enabled;
    private final Clock clock;
    private final Map<Digest, Entry> byDigest;

    DigestApiKeyAuthenticator(ApiKeysConfig config, Clock clock) {
        this.blocking = config.mode() == ApiKeysConfig.Mode.BLOCKING;
        this.enabled = blocking || !config.keys().isEmpty();
        this.clock = clock;
        Map<Digest, Entry> map = new HashMap<>();
        for (ApiKeyConfig k : config.keys()) {
            // First entry wins on a duplicate value, as validation reports duplicates.
            map.putIfAbsent(new Digest(sha256(k.key().reveal())), new Entry(k));
        }
        this.byDigest = Map.copyOf(map);
    }

    @Override
    public boolean enabled() {
        return enabled;
    }

    @Override
    public AuthResult authenticate(HttpHeaders headers) {
        if (!enabled) {
            return AuthResult.ANONYMOUS;
        }
        String bearer = bearerToken(headers.get(HttpHeaderNames.AUTHORIZATION));
        String apiKeyHeader = trimToNull(headers.get(X_API_KEY));
        if (bearer == null && apiKeyHeader == null) {
            return blocking ? MISSING : AuthResult.ANONYMOUS;
        }
        // A client may carry an upstream credential in one header and ours in the other: try both.
        Entry found = bearer != null ? lookup(bearer) : null;
        AuthResult.CredentialSource source = AuthResult.CredentialSource.AUTHORIZATION;
        if (found == null && apiKeyHeader != null) {
            found = lookup(apiKeyHeader);
            source = AuthResult.CredentialSource.X_API_KEY;
        }
        if (found == null) {
            return INVALID;
        }
        if (!found.key.usableAt(clock.instant())) {
            if (log.isDebugEnabled()) {
                log.debug("refused API key id={}: {}", found.key.id(), found.key.enabled() ? "expired" : "disabled");
            }
            return INVALID;
        }
        return source == AuthResult.CredentialSource.AUTHORIZATION ? found.viaAuthorization : found.viaXApiKey;
    }

    private @Nullable Entry lookup(String presented) {
        return byDigest.get(new Digest(sha256(presented)));
    }

    static @Nullable String bearerToken(@Nullable String authorization) {
        if (authorization == null) {
            return null;
        }
        String v = authorization.trim();
        if (v.length() > 7 && v.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return trimToNull(v.substring(7));
        }
        return null;
    }

    private static @Nullable String trimToNull(@Nullable String s) {
        if (s == null) {
            return null;
        }
        String t = s.trim();
        return t.isEmpty() ? null : t;
    }

    static byte[] sha256(String value) {
        return SHA256.get().digest(value.getBytes(StandardCharsets.UTF_8));
    }

    /** A digest as a map key: equality in constant time, hash from its first bytes (already uniform). */
    private static final class Digest {
        private final byte[] bytes;
        private final int hash;

        Digest(byte[] bytes) {
            this.bytes = bytes;
            this.hash = Arrays.hashCode(Arrays.copyOf(bytes, 4));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Digest d && MessageDigest.isEqual(bytes, d.bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Results allocated once per key so a successful check allocates nothing but the digest. */
    private static final class Entry {
        final ApiKeyConfig key;
        final AuthResult viaAuthorization;
        final AuthResult viaXApiKey;

        Entry(ApiKeyConfig key) {
            this.key = key;
            this.viaAuthorization = new AuthResult.Authenticated(key, AuthResult.CredentialSource.AUTHORIZATION);
            this.viaXApiKey = new AuthResult.Authenticated(key, AuthResult.CredentialSource.X_API_KEY);
        }
    }
}
