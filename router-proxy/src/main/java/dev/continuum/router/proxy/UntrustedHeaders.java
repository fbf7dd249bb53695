package dev.continuum.router.proxy;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The trust boundary for routing headers: clients cannot pin a worker. Every {@code x-dynamo-*}
 * header and upstream's older aliases are removed from each client request, at ingress and again
 * right before dispatch. {@code x-tenant-id} is kept: it selects a cache namespace, not a worker.
 * {@link #DECISION_ID} is removed too: the router sends its own on a pinned request (the record's id, which a
 * worker or a simulator pairs its own figures with), so a client must not be able to forge or preset it.
 * On the way back, {@link #stripResponse} also removes every upstream {@code x-continuum-*} header:
 * those are the router's own disclosures, and an upstream must not be able to forge them.
 */
public final class UntrustedHeaders {
    private static final String DYNAMO_PREFIX = "x-dynamo-";
    private static final String CONTINUUM_PREFIX = "x-continuum-";
    /**
     * The session header ({@code docs/replicas.md}, session affinity) names a conversation, not a worker: the router
     * binds it to a rank itself, so a client may send it and it is kept.
     */
    public static final AsciiString SESSION_ID = AsciiString.cached("x-dynamo-session-id");
    /** The router's decision id: the router's to send upstream on a plan's path, never the client's. */
    public static final AsciiString DECISION_ID = AsciiString.cached("x-continuum-decision-id");
    /** Upstream's older spellings of the pinning headers. */
    private static final List<AsciiString> ALIASES = List.of(
            AsciiString.cached("x-worker-instance-id"),
            AsciiString.cached("x-prefill-instance-id"),
            AsciiString.cached("x-dp-rank"),
            AsciiString.cached("x-data-parallel-rank"),
            AsciiString.cached("x-prefill-dp-rank"));

    private UntrustedHeaders() {
    }

    public static boolean isUntrusted(CharSequence name) {
        if (hasPrefix(name, DYNAMO_PREFIX) && !SESSION_ID.contentEqualsIgnoreCase(name)) {
            return true;
        }
        if (DECISION_ID.contentEqualsIgnoreCase(name)) {
            return true;
        }
        for (AsciiString alias : ALIASES) {
            if (alias.contentEqualsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** An upstream response header the client must not see from the upstream: untrusted, or {@code x-continuum-*}. */
    public static boolean isUntrustedResponse(CharSequence name) {
        return hasPrefix(name, CONTINUUM_PREFIX) || isUntrusted(name);
    }

    private static boolean hasPrefix(CharSequence name, String prefix) {
        return name.length() >= prefix.length()
                && AsciiString.regionMatches(name, true, 0, prefix, 0, prefix.length());
    }

    /** Removes every untrusted header from a client request; allocates only when one is present. */
    public static void strip(HttpHeaders headers) {
        strip(headers, false);
    }

    /**
     * Removes every untrusted and every {@code x-continuum-*} header from an upstream response head,
     * before the router adds its own disclosures; allocates only when one is present.
     */
    public static void stripResponse(HttpHeaders headers) {
        strip(headers, true);
    }

    private static void strip(HttpHeaders headers, boolean response) {
        List<CharSequence> found = null;
        Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
        while (it.hasNext()) {
            CharSequence name = it.next().getKey();
            if (response ? isUntrustedResponse(name) : isUntrusted(name)) {
                if (found == null) {
                    found = new ArrayList<>(2);
                }
                found.add(name);
            }
        }
        if (found != null) {
            for (CharSequence name : found) {
                headers.remove(name);
            }
        }
    }
}
