package dev.continuum.router.kv.prompt;

import java.beans.FeatureDescriptor;
import java.util.Collection;
import java.util.Iterator;

import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;
import org.jspecify.annotations.Nullable;

/**
 * Resolves method calls on strings ({@code s.startswith('x')}) to Python's {@code str} methods
 * ({@link PyStrings}); placed ahead of jinjava's own resolvers so that a Python name never reaches a Java
 * method of the same name with other semantics. Anything else it leaves unresolved.
 */
final class PyStringResolver extends ELResolver {
    private final int maxChars;

    PyStringResolver(int maxChars) {
        this.maxChars = maxChars;
    }

    @Override
    public @Nullable Object invoke(ELContext context, @Nullable Object base, Object method,
                                   Class<?> @Nullable [] paramTypes, Object @Nullable [] params) {
        if (!(base instanceof CharSequence cs)) {
            return null;
        }
        Object[] args = params == null ? new Object[0] : params;
        Object result = call(cs.toString(), String.valueOf(method), args);
        if (result != NOT_A_METHOD) {
            context.setPropertyResolved(true);
            return result;
        }
        return null;
    }

    private static final Object NOT_A_METHOD = new Object();

    private Object call(String s, String method, Object[] args) {
        return switch (method) {
            case "startswith" -> affix(s, args, true);
            case "endswith" -> affix(s, args, false);
            case "strip" -> PyStrings.strip(s, optString(args, 0), true, true);
            case "lstrip" -> PyStrings.strip(s, optString(args, 0), true, false);
            case "rstrip" -> PyStrings.strip(s, optString(args, 0), false, true);
            case "split" -> PyStrings.split(s, optString(args, 0), optInt(args, 1, -1));
            case "rsplit" -> PyStrings.rsplit(s, optString(args, 0), optInt(args, 1, -1));
            case "replace" -> PyStrings.replace(s, string(args, 0), string(args, 1), optInt(args, 2, -1), maxChars);
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "title" -> PyStrings.title(s);
            case "capitalize" -> PyStrings.capitalize(s);
            case "find" -> s.indexOf(string(args, 0));
            case "rfind" -> s.lastIndexOf(string(args, 0));
            case "count" -> PyStrings.count(s, string(args, 0));
            case "join" -> PyStrings.join(s, collection(args), maxChars);
            case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
            case "isspace" -> !s.isEmpty() && s.chars().allMatch(c -> PyStrings.isSpace((char) c));
            default -> NOT_A_METHOD;
        };
    }

    private static boolean affix(String s, Object[] args, boolean prefix) {
        if (args.length == 0) {
            throw new TemplateFailure((prefix ? "startswith" : "endswith") + " takes at least 1 argument");
        }
        int start = clampIndex(optInt(args, 1, 0), s.length());
        int end = args.length > 2 && args[2] != null ? clampIndex(optInt(args, 2, s.length()), s.length()) : s.length();
        if (start > end) {
            return false;
        }
        String window = s.substring(start, end);
        if (args[0] instanceof Collection<?> choices) {
            for (Object choice : choices) {
                if (choice instanceof CharSequence c && matches(window, c.toString(), prefix)) {
                    return true;
                }
            }
            return false;
        }
        return matches(window, string(args, 0), prefix);
    }

    private static boolean matches(String window, String affix, boolean prefix) {
        return prefix ? window.startsWith(affix) : window.endsWith(affix);
    }

    /** Python's slice-index normalisation: negative counts from the end, then clamped to the string. */
    private static int clampIndex(int index, int length) {
        int i = index < 0 ? index + length : index;
        return Math.max(0, Math.min(length, i));
    }

    private static String string(Object[] args, int i) {
        if (i >= args.length || !(args[i] instanceof CharSequence cs)) {
            throw new TemplateFailure("expected a string argument at position " + (i + 1));
        }
        return cs.toString();
    }

    private static @Nullable String optString(Object[] args, int i) {
        if (i >= args.length || args[i] == null) {
            return null;
        }
        return string(args, i);
    }

    private static int optInt(Object[] args, int i, int fallback) {
        if (i >= args.length || args[i] == null) {
            return fallback;
        }
        if (args[i] instanceof Number n) {
            long v = n.longValue();
            return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
        }
        throw new TemplateFailure("expected an integer argument at position " + (i + 1));
    }

    private static Collection<?> collection(Object[] args) {
        if (args.length > 0 && args[0] instanceof Collection<?> c) {
            return c;
        }
        throw new TemplateFailure("join: expected a list");
    }

    @Override
    public @Nullable Object getValue(ELContext context, @Nullable Object base, Object property) {
        return null;
    }

    @Override
    public @Nullable Class<?> getType(ELContext context, @Nullable Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, @Nullable Object base, Object property, @Nullable Object value) {
        // read-only: strings are immutable in a template
    }

    @Override
    public boolean isReadOnly(ELContext context, @Nullable Object base, Object property) {
        return true;
    }

    @Override
    public @Nullable Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, @Nullable Object base) {
        return null;
    }

    @Override
    public @Nullable Class<?> getCommonPropertyType(ELContext context, @Nullable Object base) {
        return base instanceof CharSequence ? Object.class : null;
    }

}
