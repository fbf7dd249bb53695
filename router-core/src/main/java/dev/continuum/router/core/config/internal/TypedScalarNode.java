package dev.continuum.router.core.config.internal;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ConfigNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The typed readings of a config node's scalar, each reporting a value it cannot read as an {@code invalid}
 * problem at the node's path and answering the default instead, so one pass reports every problem. Built on
 * two primitives a node supplies: its scalar text for a reading ({@link #textFor}) and the report.
 */
abstract class TypedScalarNode implements ConfigNode {
    private static final Pattern INTEGER = Pattern.compile("[-+]?\\d{1,19}");
    private static final Pattern DECIMAL = Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");

    /**
     * The scalar text to read as {@code expectation}; null when there is none to read: missing or null (the
     * default applies), or a list or map (then reported here as not {@code expectation}).
     */
    protected abstract @Nullable String textFor(String expectation);

    @Override
    public String asString(String defaultValue) {
        String t = textFor("a string");
        return t == null ? defaultValue : t;
    }

    @Override
    public @Nullable String asStringOrNull() {
        return textFor("a string");
    }

    @Override
    public int asInt(int defaultValue) {
        return asInt(defaultValue, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    @Override
    public int asInt(int defaultValue, int min, int max) {
        String t = textFor("an integer");
        if (t == null) {
            return defaultValue;
        }
        String s = t.trim();
        if (!INTEGER.matcher(s).matches()) {
            invalid("an integer");
            return defaultValue;
        }
        long v;
        try {
            v = Long.parseLong(s);
        } catch (NumberFormatException e) {
            invalid("an integer");
            return defaultValue;
        }
        if (v < min || v > max) {
            invalid(rangeExpectation(min, max));
            return defaultValue;
        }
        return (int) v;
    }

    private static String rangeExpectation(long min, long max) {
        if (max == Integer.MAX_VALUE || max == Long.MAX_VALUE) {
            return min == 1 ? "> 0" : ">= " + min;
        }
        return min + ".." + max;
    }

    @Override
    public long asLong(long defaultValue) {
        String t = textFor("an integer");
        if (t == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(t.trim());
        } catch (NumberFormatException e) {
            invalid("an integer");
            return defaultValue;
        }
    }

    @Override
    public boolean asBool(boolean defaultValue) {
        String t = textFor("true or false");
        if (t == null) {
            return defaultValue;
        }
        switch (t.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1":
                return true;
            case "false", "no", "off", "0":
                return false;
            default:
                invalid("true or false");
                return defaultValue;
        }
    }

    @Override
    public double asDouble(double defaultValue) {
        String t = textFor("a number");
        if (t == null) {
            return defaultValue;
        }
        String s = t.trim();
        if (!DECIMAL.matcher(s).matches()) {
            invalid("a number");
            return defaultValue;
        }
        double v = Double.parseDouble(s);
        if (Double.isInfinite(v)) {
            invalid("a number");
            return defaultValue;
        }
        return v;
    }

    @Override
    public Duration asDuration(Duration defaultValue) {
        Duration d = parsedDuration();
        return d == null ? defaultValue : d;
    }

    /** The duration written here, or null when missing, null, or invalid (then already reported). */
    private @Nullable Duration parsedDuration() {
        String t = textFor(Units.DURATION_EXPECTATION);
        if (t == null) {
            return null;
        }
        Duration d = Units.parseDuration(t);
        if (d == null) {
            invalid(Units.DURATION_EXPECTATION);
        }
        return d;
    }

    @Override
    public Duration asPositiveDuration(Duration defaultValue) {
        Duration d = parsedDuration();
        if (d == null) {
            return defaultValue;
        }
        if (d.isZero()) {
            invalid("a duration > 0");
            return defaultValue;
        }
        return d;
    }

    @Override
    public Duration asDuration(Duration defaultValue, Duration min, Duration max) {
        Duration d = parsedDuration();
        if (d == null) {
            return defaultValue;
        }
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            invalid("a duration from " + Units.formatDuration(min) + " to " + Units.formatDuration(max));
            return defaultValue;
        }
        return d;
    }

    @Override
    public ByteSize asByteSize(ByteSize defaultValue) {
        String t = textFor(Units.BYTE_SIZE_EXPECTATION);
        if (t == null) {
            return defaultValue;
        }
        Long bytes = Units.parseByteSize(t);
        if (bytes == null) {
            invalid(Units.BYTE_SIZE_EXPECTATION);
            return defaultValue;
        }
        return new ByteSize(bytes);
    }

    @Override
    public List<String> asStringList() {
        List<String> out = new ArrayList<>();
        for (ConfigNode e : elements()) {
            String s = e.asStringOrNull();
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    @Override
    public <T> T asChoice(T defaultValue, Function<String, @Nullable T> parser, String expectation) {
        String t = textFor(expectation);
        if (t == null) {
            return defaultValue;
        }
        T v = parser.apply(t.trim());
        if (v == null) {
            invalid(expectation);
            return defaultValue;
        }
        return v;
    }
}
