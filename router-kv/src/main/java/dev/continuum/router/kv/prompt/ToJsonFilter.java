package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.AdvancedFilter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * transformers' {@code tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)}: Python's
 * {@code json.dumps} with those arguments, positional or named ({@link PyJson}). It replaces jinjava's own
 * {@code tojson}, whose spacing and escaping differ.
 */
final class ToJsonFilter implements AdvancedFilter {
    private final int maxChars;

    ToJsonFilter(int maxChars) {
        this.maxChars = maxChars;
    }

    @Override
    public String getName() {
        return "tojson";
    }

    @Override
    public Object filter(@Nullable Object var, JinjavaInterpreter interpreter, Object[] args,
                         Map<String, Object> kwargs) {
        Object ensureAscii = arg(args, kwargs, 0, "ensure_ascii");
        Object indent = arg(args, kwargs, 1, "indent");
        Object separators = arg(args, kwargs, 2, "separators");
        Object sortKeys = arg(args, kwargs, 3, "sort_keys");
        try {
            return PyJson.dumps(var, PyJson.Options.of(Boolean.TRUE.equals(ensureAscii), indent(indent),
                    separators(separators), Boolean.TRUE.equals(sortKeys)), maxChars);
        } catch (TemplateFailure f) {
            throw RenderBudget.failCurrent(f);
        }
    }

    private static @Nullable Object arg(Object[] args, Map<String, Object> kwargs, int position, String name) {
        if (kwargs.containsKey(name)) {
            return kwargs.get(name);
        }
        return position < args.length ? args[position] : null;
    }

    /** Python's json indent: a count of spaces or the indent string itself; None is one line. */
    private static @Nullable String indent(@Nullable Object indent) {
        if (indent == null) {
            return null;
        }
        if (indent instanceof Number n) {
            return " ".repeat((int) Math.max(0, Math.min(64, n.longValue())));
        }
        return indent.toString();
    }

    private static @Nullable List<String> separators(@Nullable Object separators) {
        if (separators == null) {
            return null;
        }
        if (separators instanceof Collection<?> c && c.size() == 2) {
            List<String> list = new ArrayList<>(2);
            for (Object o : c) {
                list.add(String.valueOf(o));
            }
            return list;
        }
        throw RenderBudget.failCurrent(new TemplateFailure("tojson: separators must be a pair of strings"));
    }
}
