package dev.continuum.router.proxy.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AsciiString;
import java.util.Iterator;
import org.jspecify.annotations.Nullable;

/**
 * The message-framing rules Netty's decoder leaves to the application (it already refuses
 * {@code Content-Length} with {@code Transfer-Encoding}, duplicate or malformed lengths, a final
 * coding other than chunked, malformed chunk sizes, bare LF and whitespace before a colon).
 * Checked on every decoded head; allocation-free unless a check fails.
 */
final class RequestFraming {
    private RequestFraming() {
    }

    /** Null when the head is acceptable, else why it is refused (400 or 501). */
    static @Nullable Rejection check(HttpRequest req) {
        HttpHeaders h = req.headers();
        // RFC 9112 section 3.2: an HTTP/1.1 request without Host, or with more than one, gets 400.
        if (req.protocolVersion().majorVersion() == 1 && req.protocolVersion().minorVersion() >= 1
                && count(h, HttpHeaderNames.HOST) != 1) {
            return Rejection.MALFORMED;
        }
        if (h.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            return transferEncoding(h);
        }
        return null;
    }

    private static int count(HttpHeaders h, AsciiString name) {
        int n = 0;
        Iterator<? extends CharSequence> it = h.valueCharSequenceIterator(name);
        while (it.hasNext() && n < 2) {
            it.next();
            n++;
        }
        return n;
    }

    /**
     * The only transfer coding the router decodes is a single {@code chunked}. Netty has refused a list
     * that does not end in chunked; what is left here are other codings before it (RFC 9112 section 6.1:
     * a coding the server does not understand gets 501) and chunked applied twice (400).
     */
    private static @Nullable Rejection transferEncoding(HttpHeaders h) {
        int chunked = 0;
        Iterator<? extends CharSequence> values = h.valueCharSequenceIterator(HttpHeaderNames.TRANSFER_ENCODING);
        while (values.hasNext()) {
            CharSequence v = values.next();
            int start = 0;
            for (int i = 0; i <= v.length(); i++) {
                if (i == v.length() || v.charAt(i) == ',') {
                    int s = start;
                    int e = i;
                    while (s < e && isOws(v.charAt(s))) {
                        s++;
                    }
                    while (e > s && isOws(v.charAt(e - 1))) {
                        e--;
                    }
                    if (e > s) {
                        if (!AsciiString.contentEqualsIgnoreCase(v.subSequence(s, e), HttpHeaderValues.CHUNKED)) {
                            return Rejection.UNSUPPORTED_TRANSFER_CODING;
                        }
                        chunked++;
                    }
                    start = i + 1;
                }
            }
        }
        return chunked == 1 ? null : Rejection.MALFORMED;
    }

    private static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }
}
