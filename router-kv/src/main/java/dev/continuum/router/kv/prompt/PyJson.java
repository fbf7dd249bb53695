package dev.continuum.router.kv.prompt;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Python's {@code json.dumps}, byte for byte, over the values a template sees (maps, lists, strings, numbers,
 * booleans, null): what transformers' {@code tojson} filter calls (default {@code ensure_ascii=False}, then
 * {@code indent}, {@code separators}, {@code sort_keys}). Jinja2's own {@code tojson} HTML-escapes and jinjava's
 * differs in spacing; chat templates are written against transformers' filter.
 */
final class PyJson {
    /** Options as {@code json.dumps} takes them; {@code indent == null} is a single line. */
    record Options(boolean ensureAscii, @Nullable String indent, String itemSeparator, String keySeparator,
                   boolean sortKeys) {
        static Options of(boolean ensureAscii, @Nullable String indent, @Nullable List<String> separators,
                          boolean sortKeys) {
            String item = indent == null ? ", " : ",";
            String key = ": ";
            if (separators != null) {
                item = separators.get(0);
                key = separators.get(1);
            }
            return new Options(ensureAscii, indent, item, key, sortKeys);
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    /** Python's json.dumps raises past its recursion limit; nesting this deep means a hostile value. */
    private static final int MAX_DEPTH = 256;

    private final Options options;
    private final StringBuilder out;
    private final int maxChars;

    private PyJson(Options options, int maxChars) {
        this.options = options;
        this.maxChars = maxChars;
        this.out = new StringBuilder(64);
    }

    /**
     * @throws TemplateFailure when a value is not JSON-serializable, nests too deep or the text exceeds
     *                         {@code maxChars}
     */
    static String dumps(@Nullable Object value, Options options, int maxChars) {
        PyJson json = new PyJson(options, maxChars);
        json.write(value, 0);
        return json.out.toString();
    }

    private void write(@Nullable Object value, int depth) {
        if (depth > MAX_DEPTH) {
            throw new TemplateFailure("tojson: value nested deeper than " + MAX_DEPTH);
        }
        if (value == null) {
            append("null");
        } else if (value instanceof Boolean b) {
            append(b ? "true" : "false");
        } else if (value instanceof CharSequence s) {
            string(s.toString());
        } else if (value instanceof Double || value instanceof Float) {
            append(floatRepr(((Number) value).doubleValue()));
        } else if (value instanceof BigDecimal d) {
            append(floatRepr(d.doubleValue()));
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger) {
            append(value.toString());
        } else if (value instanceof Map<?, ?> map) {
            object(map, depth);
        } else if (value instanceof Collection<?> list) {
            array(list, depth);
        } else if (value instanceof Object[] array) {
            array(List.of(array), depth);
        } else {
            throw new TemplateFailure("tojson: Object of type " + value.getClass().getSimpleName()
                    + " is not JSON serializable");
        }
    }

    private void object(Map<?, ?> map, int depth) {
        if (map.isEmpty()) {
            append("{}");
            return;
        }
        List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
        if (options.sortKeys()) {
            entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
        }
        append("{");
        boolean first = true;
        for (Map.Entry<?, ?> e : entries) {
            if (!first) {
                append(options.itemSeparator());
            }
            first = false;
            newline(depth + 1);
            string(String.valueOf(e.getKey()));
            append(options.keySeparator());
            write(e.getValue(), depth + 1);
        }
        newline(depth);
        append("}");
    }

    private void array(Collection<?> list, int depth) {
        if (list.isEmpty()) {
            append("[]");
            return;
        }
        append("[");
        boolean first = true;
        for (Object item : list) {
            if (!first) {
                append(options.itemSeparator());
            }
            first = false;
            newline(depth + 1);
            write(item, depth + 1);
        }
        newline(depth);
        append("]");
    }

    private void newline(int depth) {
        String indent = options.indent();
        if (indent != null) {
            append("\n");
            for (int i = 0; i < depth; i++) {
                append(indent);
            }
        }
    }

    private void string(String s) {
        append("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (options.ensureAscii() && c > 0x7f)) {
                        out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 15])
                                .append(HEX[(c >> 4) & 15]).append(HEX[c & 15]);
                    } else {
                        out.append(c);
                    }
                }
            }
            checkLength();
        }
        append("\"");
    }

    private void append(String s) {
        out.append(s);
        checkLength();
    }

    private void checkLength() {
        if (out.length() > maxChars) {
            throw new TemplateFailure.TooLarge("tojson: more than " + maxChars + " characters");
        }
    }

    /** Python's {@code repr(float)}: the shortest digits that read back the same double, as Python lays them out. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(d);
        BigDecimal shortest = exact;
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal rounded = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (rounded.doubleValue() == d) {
                shortest = rounded;
                break;
            }
        }
        String digits = shortest.unscaledValue().abs().toString().replaceFirst("0+$", "");
        if (digits.isEmpty()) {
            digits = "0";
        }
        // The decimal exponent of the first digit: value = 0.d1d2... * 10^(point)
        int point = shortest.precision() - shortest.scale();
        int exponent = point - 1;
        String sign = d < 0 ? "-" : "";
        if (exponent >= -4 && exponent < 16) {
            StringBuilder fixed = new StringBuilder(sign);
            if (point <= 0) {
                fixed.append("0.");
                fixed.append("0".repeat(-point));
                fixed.append(digits);
            } else if (point >= digits.length()) {
                fixed.append(digits).append("0".repeat(point - digits.length())).append(".0");
            } else {
                fixed.append(digits, 0, point).append('.').append(digits, point, digits.length());
            }
            return fixed.toString();
        }
        StringBuilder sci = new StringBuilder(sign).append(digits.charAt(0));
        if (digits.length() > 1) {
            sci.append('.').append(digits, 1, digits.length());
        }
        sci.append('e').append(exponent < 0 ? '-' : '+');
        int abs = Math.abs(exponent);
        if (abs < 10) {
            sci.append('0');
        }
        return sci.append(abs).toString();
    }
}
