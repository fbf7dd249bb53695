package dev.continuum.router.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.List;

/**
 * Headers that describe one connection, not the message (RFC 9110 section 7.6.1), so a proxy
 * never forwards them, plus those named in {@code Connection}.
 */
final class HopByHop {
    // Netty deprecates these constants because HTTP/1.1 dropped the headers; a proxy still strips them.
    private static final AsciiString KEEP_ALIVE = AsciiString.cached("keep-alive");
    private static final AsciiString PROXY_CONNECTION = AsciiString.cached("proxy-connection");
    private static final List<AsciiString> REQUEST = List.of(
            HttpHeaderNames.CONNECTION, KEEP_ALIVE, PROXY_CONNECTION,
            HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.UPGRADE,
            HttpHeaderNames.PROXY_AUTHORIZATION,
            // Recomputed for the upstream rather than copied:
            HttpHeaderNames.HOST, HttpHeaderNames.CONTENT_LENGTH, HttpHeaderNames.EXPECT);
    private static final List<AsciiString> RESPONSE = List.of(
            HttpHeaderNames.CONNECTION, KEEP_ALIVE, PROXY_CONNECTION,
            HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.UPGRADE,
            HttpHeaderNames.PROXY_AUTHENTICATE);

    private HopByHop() {
    }

    static boolean isRequestHopByHop(CharSequence name) {
        for (AsciiString h : REQUEST) {
            if (h.contentEqualsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** The extra header names listed in {@code Connection} (usually none: no allocation then). */
    static List<String> connectionListed(HttpHeaders headers) {
        List<String> out = null;
        for (String v : headers.getAll(HttpHeaderNames.CONNECTION)) {
            for (String token : v.split(",")) {
                String t = token.trim();
                if (!t.isEmpty() && !t.equalsIgnoreCase("close") && !t.equalsIgnoreCase("keep-alive")) {
                    if (out == null) {
                        out = new ArrayList<>(2);
                    }
                    out.add(t);
                }
            }
        }
        return out == null ? List.of() : out;
    }

    static boolean listed(List<String> names, CharSequence name) {
        for (int i = 0; i < names.size(); i++) {
            if (AsciiString.contentEqualsIgnoreCase(names.get(i), name)) {
                return true;
            }
        }
        return false;
    }

    /** Removes the hop-by-hop headers of an upstream response before it is relayed. */
    static void stripResponse(HttpHeaders headers) {
        List<String> listed = connectionListed(headers);
        for (int i = 0; i < listed.size(); i++) {
            headers.remove(listed.get(i));
        }
        for (AsciiString h : RESPONSE) {
            headers.remove(h);
        }
    }
}
