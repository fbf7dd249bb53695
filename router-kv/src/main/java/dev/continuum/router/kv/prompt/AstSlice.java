package dev.continuum.router.kv.prompt;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import jinjava.de.odysseus.el.tree.Bindings;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.de.odysseus.el.tree.impl.ast.AstRightValue;
import jinjava.javax.el.ELContext;
import org.jspecify.annotations.Nullable;

/**
 * {@code base[start:stop:step]} with Python's slice semantics on lists and strings: omitted bounds, negative
 * indices counted from the end, a negative step walking backwards ({@code [::-1]} reverses), bounds clamped.
 * Anything else sliced is undefined (Jinja2 would raise; the template then typically fails on it).
 */
final class AstSlice extends AstRightValue {
    private final AstNode base;
    private final @Nullable AstNode start;
    private final @Nullable AstNode stop;
    private final @Nullable AstNode step;

    AstSlice(AstNode base, @Nullable AstNode start, @Nullable AstNode stop, @Nullable AstNode step) {
        this.base = base;
        this.start = start;
        this.stop = stop;
        this.step = step;
    }

    @Override
    public @Nullable Object eval(Bindings bindings, ELContext context) {
        Object value = base.eval(bindings, context);
        Long first = bound(start, bindings, context);
        Long last = bound(stop, bindings, context);
        Long by = bound(step, bindings, context);
        long stride = by == null ? 1 : by;
        if (stride == 0) {
            throw RenderBudget.failCurrent(new TemplateFailure("slice step cannot be zero"));
        }
        if (value instanceof CharSequence s) {
            StringBuilder out = new StringBuilder();
            for (int i : indices(s.length(), first, last, stride)) {
                out.append(s.charAt(i));
            }
            return out.toString();
        }
        if (value instanceof Collection<?> c) {
            List<Object> items = new ArrayList<>(c);
            List<Object> out = new ArrayList<>();
            for (int i : indices(items.size(), first, last, stride)) {
                out.add(items.get(i));
            }
            return out;
        }
        return null;
    }

    /** The indices {@code range(*slice(start, stop, step).indices(length))} visits. */
    static int[] indices(int length, @Nullable Long start, @Nullable Long stop, long step) {
        long lo;
        long hi;
        if (step > 0) {
            lo = start == null ? 0 : clamp(start, length, 0, length);
            hi = stop == null ? length : clamp(stop, length, 0, length);
        } else {
            lo = start == null ? length - 1 : clamp(start, length, -1, length - 1);
            hi = stop == null ? -1 : clamp(stop, length, -1, length - 1);
        }
        long count = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0)
                : (lo > hi ? (lo - hi + (-step) - 1) / (-step) : 0);
        int[] out = new int[(int) count];
        for (int k = 0; k < count; k++) {
            out[k] = (int) (lo + k * step);
        }
        return out;
    }

    private static long clamp(long index, int length, long min, long max) {
        long i = index < 0 ? index + length : index;
        return Math.max(min, Math.min(max, i));
    }

    private static @Nullable Long bound(@Nullable AstNode node, Bindings bindings, ELContext context) {
        if (node == null) {
            return null;
        }
        Object v = node.eval(bindings, context);
        if (v == null) {
            return null;
        }
        if (v instanceof Number n) {
            return n.longValue();
        }
        throw RenderBudget.failCurrent(new TemplateFailure("slice indices must be integers or None"));
    }

    @Override
    public void appendStructure(StringBuilder builder, Bindings bindings) {
        base.appendStructure(builder, bindings);
        builder.append('[');
        if (start != null) {
            start.appendStructure(builder, bindings);
        }
        builder.append(':');
        if (stop != null) {
            stop.appendStructure(builder, bindings);
        }
        builder.append(':');
        if (step != null) {
            step.appendStructure(builder, bindings);
        }
        builder.append(']');
    }

    @Override
    public int getCardinality() {
        return 4;
    }

    @Override
    public @Nullable AstNode getChild(int i) {
        return switch (i) {
            case 0 -> base;
            case 1 -> start;
            case 2 -> stop;
            case 3 -> step;
            default -> null;
        };
    }

    @Override
    public String toString() {
        return "[:]";
    }
}
