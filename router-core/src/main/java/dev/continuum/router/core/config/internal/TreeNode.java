package dev.continuum.router.core.config.internal;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.HomeDirectory;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.Secret;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The loader's {@link ConfigNode}: a mutable-while-built, then read-only YAML node that records which
 * keys the binders asked for, so keys never asked for can be reported afterwards. The typed readings of a
 * scalar (numbers, durations, sizes, choices) live in {@link TypedScalarNode}; this class is the tree.
 */
public final class TreeNode extends TypedScalarNode {

    private final TreeContext ctx;
    private final String path;
    private final String location;
    private final Kind kind;
    private final @Nullable String rawText;
    /** A plain scalar YAML typed as int, float or bool: shown unquoted in messages. */
    private final boolean typedPlain;
    private final boolean interpolate;
    private final Map<String, TreeNode> children;
    private final List<TreeNode> elements;
    private final Set<String> asked = new LinkedHashSet<>();
    private boolean engaged;
    private boolean usedDeep;
    private boolean shapeReported;
    private boolean sensitive;
    private boolean resolved;
    private @Nullable String resolvedText;

    private TreeNode(TreeContext ctx, String path, String location, Kind kind, @Nullable String rawText,
                     boolean typedPlain, boolean interpolate) {
        this.ctx = ctx;
        this.path = path;
        this.location = location;
        this.kind = kind;
        this.rawText = rawText;
        this.typedPlain = typedPlain;
        this.interpolate = interpolate;
        this.children = kind == Kind.MAP ? new LinkedHashMap<>() : Map.of();
        this.elements = kind == Kind.LIST ? new ArrayList<>() : List.of();
        if (kind != Kind.MISSING) {
            ctx.recordLocation(path, location);
        }
    }

    static TreeNode scalar(TreeContext ctx, String path, String location, String text, boolean typedPlain,
                           boolean interpolate) {
        return new TreeNode(ctx, path, location, Kind.SCALAR, text, typedPlain, interpolate);
    }

    static TreeNode nullNode(TreeContext ctx, String path, String location) {
        return new TreeNode(ctx, path, location, Kind.NULL, null, false, false);
    }

    static TreeNode map(TreeContext ctx, String path, String location) {
        return new TreeNode(ctx, path, location, Kind.MAP, null, false, false);
    }

    static TreeNode list(TreeContext ctx, String path, String location) {
        return new TreeNode(ctx, path, location, Kind.LIST, null, false, false);
    }

    public static TreeNode missing(TreeContext ctx, String path, String location) {
        return new TreeNode(ctx, path, location, Kind.MISSING, null, false, false);
    }

    /** An empty document: a map with no keys. */
    public static TreeNode emptyRoot(TreeContext ctx, String location) {
        return map(ctx, "", location);
    }

    /** A value from the environment or the command line: taken literally, never interpolated. */
    public static TreeNode literal(TreeContext ctx, String path, String location, String text) {
        return scalar(ctx, path, location, text, false, false);
    }

    /** A list of literal values (for example {@code CONTINUUM_BIND_ADDRESS=a,b}). */
    public static TreeNode literalList(TreeContext ctx, String path, String location, List<String> values) {
        TreeNode list = list(ctx, path, location);
        for (String v : values) {
            list.elements.add(literal(ctx, path + "[" + list.elements.size() + "]", location, v));
        }
        return list;
    }

    public static String childPath(String parent, String key) {
        return parent.isEmpty() ? key : parent + "." + key;
    }

    void putChild(String key, TreeNode child) {
        children.put(key, child);
    }

    boolean hasChild(String key) {
        return children.containsKey(key);
    }

    void addElement(TreeNode element) {
        elements.add(element);
    }

    TreeContext context() {
        return ctx;
    }

    /**
     * Replaces (or inserts) the value at a dotted {@code key path} below this map with {@code value},
     * creating intermediate maps. Returns false when an intermediate value exists but is not a map
     * (the binder reports that shape problem; the override is dropped).
     */
    public boolean override(List<String> keys, TreeNode value) {
        TreeNode at = this;
        for (int i = 0; i < keys.size() - 1; i++) {
            String key = keys.get(i);
            TreeNode next = at.children.get(key);
            if (next == null || next.kind == Kind.NULL) {
                next = map(ctx, childPath(at.path, key), value.location);
                at.children.put(key, next);
            } else if (next.kind != Kind.MAP) {
                return false;
            }
            at = next;
        }
        if (at.kind != Kind.MAP) {
            return false;
        }
        at.children.put(keys.get(keys.size() - 1), value);
        return true;
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public Kind kind() {
        return kind;
    }

    @Override
    public ConfigNode get(String key) {
        String childPath = childPath(path, key);
        if (kind == Kind.MAP) {
            engaged = true;
            asked.add(key);
            TreeNode child = children.get(key);
            return child != null ? child : missing(ctx, childPath, location);
        }
        if (kind == Kind.SCALAR || kind == Kind.LIST) {
            reportShapeOnce("a map");
        }
        return missing(ctx, childPath, location);
    }

    @Override
    public List<String> keys() {
        return List.copyOf(children.keySet());
    }

    @Override
    public List<ConfigNode> elements() {
        if (kind == Kind.LIST) {
            engaged = true;
            return List.copyOf(elements);
        }
        if (kind == Kind.SCALAR || kind == Kind.MAP) {
            reportShapeOnce("a list");
        }
        return List.of();
    }

    @Override
    public Map<String, ConfigNode> entries() {
        if (kind == Kind.MAP) {
            engaged = true;
            asked.addAll(children.keySet());
            return Collections.unmodifiableMap(new LinkedHashMap<String, ConfigNode>(children));
        }
        if (kind == Kind.SCALAR || kind == Kind.LIST) {
            reportShapeOnce("a map");
        }
        return Map.of();
    }

    @Override
    public void markUsed() {
        usedDeep = true;
    }

    @Override
    public @Nullable String scalar() {
        if (kind != Kind.SCALAR) {
            return null;
        }
        if (!resolved) {
            resolved = true;
            String raw = rawText == null ? "" : rawText;
            if (!interpolate) {
                resolvedText = raw;
            } else {
                Interpolator.Result r = Interpolator.apply(raw, ctx.env());
                if (r.error() != null) {
                    ctx.problems().invalid(path, raw, Interpolator.EXPECTATION);
                    resolvedText = null;
                } else {
                    for (String name : r.unset()) {
                        ctx.problems().warning(path, "${" + name + "} is not set; substituted an empty string");
                    }
                    resolvedText = r.value();
                }
            }
        }
        return resolvedText;
    }

    @Override
    protected @Nullable String textFor(String expectation) {
        if (kind == Kind.LIST || kind == Kind.MAP) {
            invalid(expectation);
            return null;
        }
        if (kind != Kind.SCALAR) {
            return null;
        }
        return scalar();
    }

    @Override
    public @Nullable String asPathString() {
        String t = textFor("a path");
        return t == null ? null : HomeDirectory.expand(t, HomeDirectory.of(ctx.env()));
    }

    @Override
    public @Nullable Secret asSecret() {
        sensitive = true;
        String t = textFor("a string");
        return t == null ? null : Secret.of(t);
    }

    @Override
    public void invalid(String expectation) {
        ctx.problems().error(path, shownValue() + " (expected: " + expectation + ")");
    }

    /** This node's value as a message shows it: quoted text, a bare number, or a shape word; secrets masked. */
    public String shownValue() {
        switch (kind) {
            case MISSING:
                return "missing";
            case NULL:
                return "null";
            case LIST:
                return "a list";
            case MAP:
                return "a map";
            default:
                break;
        }
        if (sensitive) {
            return Secret.MASK;
        }
        String text = resolved ? resolvedText : scalar();
        if (text == null) {
            text = rawText == null ? "" : rawText;
        }
        return typedPlain && text.equals(rawText) ? text : Problems.render(text);
    }

    @Override
    public void error(String message) {
        ctx.problems().error(path, message);
    }

    @Override
    public void warning(String message) {
        ctx.problems().warning(path, message);
    }

    @Override
    public void noEffect(String message) {
        ctx.problems().noEffect(path, message);
    }

    private void reportShapeOnce(String expectation) {
        if (!shapeReported) {
            shapeReported = true;
            invalid(expectation);
        }
    }

    /**
     * Warns about every present key that no binder asked for, in maps that a binder read. Maps nobody
     * read (below an invalid value or an unknown key) are skipped: their parent was already reported.
     */
    public void reportUnknownKeys() {
        if (usedDeep || !engaged) {
            return;
        }
        if (kind == Kind.LIST) {
            elements.forEach(TreeNode::reportUnknownKeys);
            return;
        }
        for (Map.Entry<String, TreeNode> e : children.entrySet()) {
            if (asked.contains(e.getKey())) {
                e.getValue().reportUnknownKeys();
                continue;
            }
            String suggestion = Suggestions.nearest(e.getKey(), asked);
            ctx.problems().noEffect(e.getValue().path, suggestion == null
                    ? "unknown key"
                    : "unknown key (did you mean \"" + suggestion + "\"?)");
        }
    }
}
