package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.expression.ExpressionStrategy;
import com.hubspot.jinjava.mode.ExecutionMode;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.tree.output.RenderedOutputNode;
import com.hubspot.jinjava.tree.parse.ExpressionToken;
import java.util.Collection;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What {@code {{ value }}} prints, as Jinja2 prints it: Python's {@code str()} of the value, so booleans are
 * {@code True}/{@code False}, floats Python's repr, lists and dicts Python's repr of their items
 * ({@code ['a', 1]}, {@code {'k': True}}); strings are printed as they are. jinjava would print Java's
 * {@code toString()}. A null prints as nothing (jinjava cannot tell JSON's null from an undefined name;
 * Jinja2 prints {@code None} for the former).
 */
final class PyOutput implements ExpressionStrategy {
    private static final long serialVersionUID = 1L;

    /** The execution mode that installs this strategy in every render's context. */
    static final ExecutionMode MODE = new ExecutionMode() {
        @Override
        public void prepareContext(Context context) {
            context.setExpressionStrategy(new PyOutput());
        }
    };

    @Override
    public RenderedOutputNode interpretOutput(ExpressionToken master, JinjavaInterpreter interpreter) {
        Object value = interpreter.resolveELExpression(master.getExpr(), master.getLineNumber());
        return new RenderedOutputNode(str(value));
    }

    /** Python's {@code str(value)}. */
    static String str(@Nullable Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof CharSequence s) {
            return s.toString();
        }
        StringBuilder out = new StringBuilder();
        repr(value, out, 0);
        return out.toString();
    }

    private static void repr(@Nullable Object value, StringBuilder out, int depth) {
        if (depth > 64) {
            throw RenderBudget.failCurrent(new TemplateFailure("value nested too deep to print"));
        }
        if (value == null) {
            out.append("None");
        } else if (value instanceof Boolean b) {
            out.append(b ? "True" : "False");
        } else if (value instanceof Double || value instanceof Float) {
            String r = PyJson.floatRepr(((Number) value).doubleValue());
            out.append(switch (r) {
                case "NaN" -> "nan";
                case "Infinity" -> "inf";
                case "-Infinity" -> "-inf";
                default -> r;
            });
        } else if (value instanceof CharSequence s) {
            stringRepr(s.toString(), out);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                repr(e.getKey(), out, depth + 1);
                out.append(": ");
                repr(e.getValue(), out, depth + 1);
            }
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            out.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                repr(item, out, depth + 1);
            }
            out.append(']');
        } else {
            out.append(value);
        }
    }

    /** Python's {@code repr(str)}: single quotes unless the text has one and no double quote. */
    private static void stringRepr(String s, StringBuilder out) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            if (c == quote || c == '\\') {
                out.append('\\').appendCodePoint(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (!printable(c)) {
                out.append(c < 0x100 ? String.format("\\x%02x", c)
                        : c < 0x10000 ? String.format("\\u%04x", c) : String.format("\\U%08x", c));
            } else {
                out.appendCodePoint(c);
            }
        }
        out.append(quote);
    }

    /** Python's {@code str.isprintable()} for one code point: not a control, format, separator or unassigned. */
    private static boolean printable(int c) {
        if (c == ' ') {
            return true;
        }
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                 Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                 Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }
}
