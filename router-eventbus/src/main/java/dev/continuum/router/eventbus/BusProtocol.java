package dev.continuum.router.eventbus;

import io.netty.util.AsciiString;
import java.util.regex.Pattern;

/** Names and numbers of the wire contract (docs/event-bus-protocol.md). */
public final class BusProtocol {
    /** The {@code stream_closed} code an agent sends when TLS to its upstream failed. */
    public static final String TARGET_TLS_FAILED = "target_tls_failed";
    public static final int VERSION = 1;
    public static final String SESSION_PATH = "/bus/v1/session";
    public static final String STREAMS_PREFIX = "/bus/v1/streams/";
    public static final AsciiString VERSION_HEADER = AsciiString.cached("continuum-bus-version");
    public static final AsciiString SESSION_HEADER = AsciiString.cached("continuum-bus-session");
    public static final AsciiString CLOSE_TRAILER = AsciiString.cached("continuum-bus-close");
    public static final Pattern STREAM_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    public static final Pattern SESSION_ID = Pattern.compile("sess-[0-9a-f]{32}");
    public static final int MAX_HEADER_LIST_BYTES = 8 * 1024;
    public static final int MAX_VERSIONS = 16;
    public static final int MAX_SOURCES = 64;
    public static final int MAX_NOTE_BYTES = 512;

    private BusProtocol() {
    }

    /** The version a header names, or -1 when it is missing, not a small decimal, or not implemented. */
    public static int version(@org.jspecify.annotations.Nullable CharSequence header) {
        if (header == null || header.length() == 0 || header.length() > 9) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value == VERSION ? value : -1;
    }
}
