package dev.continuum.router.core.config.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Parses and formats the unit-carrying scalars of the config: durations, byte sizes, file modes. */
public final class Units {
    public static final String DURATION_EXPECTATION = "a duration such as 500ms, 30s, 5m, 1h, 1m30s";
    public static final String BYTE_SIZE_EXPECTATION = "a size such as 1048576, 512KiB, 10MiB, 1GiB, 10MB";
    public static final String FILE_MODE_EXPECTATION = "permission bits such as 0o660, 0660 or 432 (at most 0o777)";

    private static final Pattern PLAIN_SECONDS = Pattern.compile("\\d{1,12}");
    private static final Pattern DURATION_PART = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");
    private static final Pattern BYTE_SIZE = Pattern.compile("(\\d{1,19})\\s*([A-Za-z]{0,3})");
    private static final Map<String, Long> BYTE_UNITS = Map.of(
            "", 1L, "b", 1L,
            "kb", 1_000L, "mb", 1_000_000L, "gb", 1_000_000_000L, "tb", 1_000_000_000_000L,
            "kib", 1L << 10, "mib", 1L << 20, "gib", 1L << 30, "tib", 1L << 40);

    private Units() {
    }

    /**
     * {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 2d}, concatenations such as {@code 1m30s};
     * a bare integer counts seconds. Null when the text is none of these (negative values included).
     */
    public static @Nullable Duration parseDuration(String text) {
        String t = text.trim();
        if (t.isEmpty()) {
            return null;
        }
        if (PLAIN_SECONDS.matcher(t).matches()) {
            return Duration.ofSeconds(Long.parseLong(t));
        }
        Matcher m = DURATION_PART.matcher(t);
        Duration total = Duration.ZERO;
        int at = 0;
        try {
            while (at < t.length()) {
                if (!m.find(at) || m.start() != at) {
                    return null;
                }
                long n = Long.parseLong(m.group(1));
                Duration part = switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
                total = total.plus(part);
                at = m.end();
            }
        } catch (ArithmeticException overflow) {
            return null;
        }
        return total;
    }

    /** The shortest form {@link #parseDuration} reads back exactly, for example {@code 1m30s} or {@code 500ms}. */
    public static String formatDuration(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.isNegative() || d.getNano() % 1_000_000 != 0) {
            // Not produced by the loader; keep it exact rather than pretty.
            return d.toString();
        }
        long ms = d.toMillis();
        StringBuilder out = new StringBuilder();
        long h = ms / 3_600_000;
        ms %= 3_600_000;
        long m = ms / 60_000;
        ms %= 60_000;
        long s = ms / 1000;
        ms %= 1000;
        if (h > 0) {
            out.append(h).append('h');
        }
        if (m > 0) {
            out.append(m).append('m');
        }
        if (s > 0) {
            out.append(s).append('s');
        }
        if (ms > 0) {
            out.append(ms).append("ms");
        }
        return out.toString();
    }

    /** {@code 1048576}, {@code 512KiB}, {@code 10MB} (decimal), units case-insensitive; null when invalid or overflowing. */
    public static @Nullable Long parseByteSize(String text) {
        Matcher m = BYTE_SIZE.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        Long unit = BYTE_UNITS.get(m.group(2).toLowerCase(Locale.ROOT));
        if (unit == null) {
            return null;
        }
        try {
            return Math.multiplyExact(Long.parseLong(m.group(1)), unit);
        } catch (ArithmeticException | NumberFormatException overflow) {
            return null;
        }
    }

    /**
     * A unix permission mode: {@code 0o660} and {@code 0660} are octal, anything else decimal. YAML 1.2
     * parsers read {@code 0660} as decimal 660 and {@code 0o660} as a string, so the scalar's text is
     * parsed here rather than trusting the YAML type. Null when invalid or above {@code 0o777}.
     */
    public static @Nullable Integer parseFileMode(String text) {
        String t = text.trim();
        int value;
        try {
            if (t.startsWith("0o") || t.startsWith("0O")) {
                value = Integer.parseInt(t.substring(2), 8);
            } else if (t.length() > 1 && t.startsWith("0")) {
                value = Integer.parseInt(t.substring(1), 8);
            } else {
                if (!t.chars().allMatch(Character::isDigit) || t.isEmpty()) {
                    return null;
                }
                value = Integer.parseInt(t);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        return value >= 0 && value <= 0777 ? value : null;
    }

    public static String formatFileMode(int mode) {
        return "0o" + Integer.toOctalString(mode);
    }
}
