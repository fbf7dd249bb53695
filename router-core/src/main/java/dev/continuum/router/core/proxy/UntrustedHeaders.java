package dev.continuum.router.core.proxy;

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
 */
public final class UntrustedHeaders {
    private static final String DYNAMO_PREFIX = "x-dynamo-";
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
        if (name.length() >= DYNAMO_PREFIX.length()
                && AsciiString.regionMatches(name, true, 0, DYNAMO_PREFIX, 0, DYNAMO_PREFIX.length())) {
            return true;
        }
        for (AsciiString alias : ALIASES) {
            if (alias.contentEqualsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** Removes every untrusted header; allocates only when one is present. */
    public static void strip(HttpHeaders headers) {
        List<CharSequence> found = null;
        Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
        while (it.hasNext()) {
            CharSequence name = it.next().getKey();
            if (isUntrusted(name)) {
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
