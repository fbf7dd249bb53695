package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.TokenHash;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One configuration generation of the credentials: who may connect, and which credentials a reload revoked
 * (docs/event-bus-protocol.md, section 3). Immutable; the listener swaps it on reload.
 *
 * @param brokers      the configured entries
 * @param caGeneration the client-CA generation current for this configuration
 * @param revoked      credentials removed or replaced by reloads
 */
record Credentials(List<BrokerEntry> brokers, long caGeneration, RevokedCredentials revoked) {
    /** Longer bearer values are refused before hashing: no configured token is that long. */
    static final int MAX_TOKEN_CHARS = 4096;
    private static final String BEARER = "bearer ";

    Credentials {
        brokers = List.copyOf(brokers);
    }

    /** The outcome: the entry the request authenticated as, or the refusal. */
    record Result(@Nullable BrokerEntry entry, @Nullable BusErrorCode refusal, String reason) {
        static Result ok(BrokerEntry entry, String how) {
            return new Result(entry, null, how);
        }

        static Result refused(BusErrorCode code, String reason) {
            return new Result(null, code, reason);
        }
    }

    /**
     * @param authorization the {@code authorization} header, or null
     * @param certificate   the connection's verified client certificate, or null
     */
    Result authenticate(@Nullable CharSequence authorization, @Nullable CertIdentity certificate) {
        if (authorization != null) {
            return byToken(authorization.toString(), certificate);
        }
        if (certificate != null) {
            return byCertificate(certificate);
        }
        return Result.refused(BusErrorCode.UNAUTHENTICATED, "no credential");
    }

    private Result byToken(String header, @Nullable CertIdentity certificate) {
        if (header.length() <= BEARER.length() || header.length() > BEARER.length() + MAX_TOKEN_CHARS
                || !header.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
            return Result.refused(BusErrorCode.UNAUTHENTICATED, "the authorization header is not a bearer token");
        }
        TokenHash presented = TokenHash.of(header.substring(BEARER.length()).trim());
        BrokerEntry match = null;
        // Every entry is compared, match or not, so the time taken does not say which entry (or none) matched.
        for (BrokerEntry entry : brokers) {
            TokenHash configured = entry.tokenHash();
            if (configured != null && configured.matches(presented) && match == null) {
                match = entry;
            }
        }
        if (match == null) {
            return revoked.contains(RevokedCredentials.tokenKey(presented.toString()))
                    ? Result.refused(BusErrorCode.CREDENTIAL_REVOKED, "the token was removed or replaced")
                    : Result.refused(BusErrorCode.UNAUTHENTICATED, "the token matches no entry");
        }
        if (certificate != null) {
            for (String name : certificate.dnsNames()) {
                if (!name.equals(match.id()) && entry(name) != null) {
                    return Result.refused(BusErrorCode.FORBIDDEN,
                            "the client certificate names another entry than the token");
                }
            }
        }
        return Result.ok(match, "token");
    }

    private Result byCertificate(CertIdentity certificate) {
        List<BrokerEntry> named = new ArrayList<>();
        boolean namesRevoked = false;
        for (String name : certificate.dnsNames()) {
            BrokerEntry entry = entry(name);
            if (entry != null) {
                named.add(entry);
            } else if (revoked.contains(RevokedCredentials.certKey(name))) {
                namesRevoked = true;
            }
        }
        if (named.size() > 1) {
            return Result.refused(BusErrorCode.FORBIDDEN, "the client certificate names more than one entry");
        }
        if (named.isEmpty()) {
            return namesRevoked
                    ? Result.refused(BusErrorCode.CREDENTIAL_REVOKED, "the certificate's entry was removed")
                    : Result.refused(BusErrorCode.UNAUTHENTICATED, "the client certificate names no entry");
        }
        if (certificate.caGeneration() != caGeneration) {
            return Result.refused(BusErrorCode.CREDENTIAL_REVOKED,
                    "the certificate was verified by a client CA that has since been replaced");
        }
        return Result.ok(named.get(0), "certificate");
    }

    @Nullable BrokerEntry entry(String id) {
        for (BrokerEntry entry : brokers) {
            if (entry.id().equals(id)) {
                return entry;
            }
        }
        return null;
    }

    /**
     * The next generation: credentials of {@code next} that this one had and {@code next} drops or replaces
     * join the revoked ring; credentials configured again leave it.
     */
    Credentials next(List<BrokerEntry> next, long nextCaGeneration) {
        List<String> gone = new ArrayList<>();
        Set<String> live = new HashSet<>();
        for (BrokerEntry entry : next) {
            if (entry.tokenHash() != null) {
                live.add(RevokedCredentials.tokenKey(entry.tokenHash().toString()));
            }
            live.add(RevokedCredentials.certKey(entry.id()));
        }
        for (BrokerEntry entry : brokers) {
            if (entry.tokenHash() != null) {
                String key = RevokedCredentials.tokenKey(entry.tokenHash().toString());
                if (!live.contains(key)) {
                    gone.add(key);
                }
            }
            String cert = RevokedCredentials.certKey(entry.id());
            if (!live.contains(cert)) {
                gone.add(cert);
            }
        }
        return new Credentials(next, nextCaGeneration, revoked.plus(gone).minus(live));
    }
}
