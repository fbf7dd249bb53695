package dev.continuum.router.core.logging;

import org.jspecify.annotations.Nullable;

/**
 * Makes a string from the fleet, a client or a peer safe to put in a log line: a newline in an etcd key must
 * not forge a second log line, a bidi override must not reorder what an operator reads, and a 16 MiB value
 * must not become a 16 MiB line.
 *
 * <p>Escaped as {@code \n}, {@code \r}, {@code \t}, {@code \\} or {@code \\uXXXX}: C0 controls, DEL, C1
 * controls, the Unicode line and paragraph separators, the bidi embedding, override and isolate controls and
 * the directional marks, and unpaired surrogates. Output is cut after {@link #MAX_CHARS} input characters
 * with a note of how many were left out. A string that needs nothing is returned as it is (no allocation).
 */
public final class LogSafe {
    /** Input characters kept per value; longer values are cut (keys and names are far shorter). */
    public static final int MAX_CHARS = 512;

    private LogSafe() {
    }

    /** {@code value}'s string form, escaped and bounded; {@code "null"} for null. */
    public static String escape(@Nullable Object value) {
        return escape(value, MAX_CHARS);
    }

    /** {@link #escape(Object)} with another bound on the input characters kept. */
    public static String escape(@Nullable Object value, int maxChars) {
        if (maxChars < 1) {
            throw new IllegalArgumentException("maxChars: " + maxChars + " (expected: >= 1)");
        }
        String text = String.valueOf(value);
        int length = text.length();
        int clean = 0;
        while (clean < length && clean < maxChars && !needsEscape(text, clean)) {
            clean++;
        }
        if (clean == length) {
            return text;
        }
        int kept = Math.min(length, maxChars);
        if (kept < length && kept > 0 && Character.isHighSurrogate(text.charAt(kept - 1))
                && Character.isLowSurrogate(text.charAt(kept))) {
            kept--; // do not split a pair at the cut
        }
        StringBuilder out = new StringBuilder(kept + 16);
        out.append(text, 0, Math.min(clean, kept));
        for (int i = Math.min(clean, kept); i < kept; i++) {
            char c = text.charAt(i);
            if (!needsEscape(text, i)) {
                out.append(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c == '\\') {
                out.append("\\\\");
            } else {
                out.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf]).append(HEX[c >> 4 & 0xf])
                        .append(HEX[c & 0xf]);
            }
        }
        if (kept < length) {
            out.append("...(").append(length - kept).append(" more chars)");
        }
        return out.toString();
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static boolean needsEscape(String text, int i) {
        char c = text.charAt(i);
        if (c < 0x20 || c == '\\' || (c >= 0x7f && c <= 0x9f)) {
            return true;
        }
        if (c < 0x061c) {
            return false;
        }
        if (c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x2028 && c <= 0x202e)
                || (c >= 0x2066 && c <= 0x2069)) {
            return true;
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
    }
}
