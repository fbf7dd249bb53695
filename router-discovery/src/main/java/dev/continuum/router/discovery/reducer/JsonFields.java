package dev.continuum.router.discovery.reducer;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import org.jspecify.annotations.Nullable;

/**
 * Tolerant typed reads of fleet-authored JSON: a field that is absent, null or of the wrong type reads as
 * null, and the caller drops that field alone. Numbers are read from Jackson's exact integral nodes, never
 * through {@code double}, so 64-bit IDs survive.
 */
final class JsonFields {
    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    private JsonFields() {
    }

    static @Nullable JsonNode field(@Nullable JsonNode object, String name) {
        if (object == null || !object.isObject()) {
            return null;
        }
        JsonNode value = object.get(name);
        return value == null || value.isNull() || value.isMissingNode() ? null : value;
    }

    static @Nullable String text(@Nullable JsonNode object, String name) {
        JsonNode value = field(object, name);
        return value != null && value.isTextual() ? value.textValue() : null;
    }

    /** A non-empty string, or null. */
    static @Nullable String nonEmptyText(@Nullable JsonNode object, String name) {
        String value = text(object, name);
        return value == null || value.isEmpty() ? null : value;
    }

    /**
     * An unsigned 64-bit ID: a JSON integer in [0, 2^64) or a hexadecimal string (optional {@code 0x}, 1 to
     * 16 digits). Returns null for anything else.
     */
    static @Nullable Long unsignedId(@Nullable JsonNode value) {
        if (value == null) {
            return null;
        }
        if (value.isIntegralNumber()) {
            BigInteger big = value.bigIntegerValue();
            if (big.signum() < 0 || big.compareTo(TWO_TO_64) >= 0) {
                return null;
            }
            return big.longValue();
        }
        if (value.isTextual()) {
            return parseHexId(value.textValue());
        }
        return null;
    }

    static @Nullable Long parseHexId(String text) {
        String digits = text.startsWith("0x") || text.startsWith("0X") ? text.substring(2) : text;
        if (digits.isEmpty() || digits.length() > 16) {
            return null;
        }
        for (int i = 0; i < digits.length(); i++) {
            if (Character.digit(digits.charAt(i), 16) < 0) {
                return null;
            }
        }
        return Long.parseUnsignedLong(digits, 16);
    }

    /** A JSON integer in [min, Long.MAX_VALUE], else null. */
    static @Nullable Long longAtLeast(@Nullable JsonNode object, String name, long min) {
        JsonNode value = field(object, name);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
            return null;
        }
        long v = value.longValue();
        return v >= min ? v : null;
    }

    /** A JSON integer in [min, Integer.MAX_VALUE], else null. */
    static @Nullable Integer intAtLeast(@Nullable JsonNode object, String name, int min) {
        Long v = longAtLeast(object, name, min);
        return v == null || v > Integer.MAX_VALUE ? null : v.intValue();
    }
}
