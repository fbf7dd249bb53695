package dev.continuum.router.core.config.internal;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.Secret;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The loader's {@link ConfigNode}: a mutable-while-built, then read-only YAML node that records which
 * keys the binders asked for, so keys never asked for can be reported afterwards.
 */
public final class TreeNode implements ConfigNode {
    private static final Pattern INTEGER = Pattern.compile("[-+]?\\d{1,19}");
    private static final Pattern DECIMAL = Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");

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

    /** Scalar text for a typed getter; null (already reported) when this is not a usable scalar. */
    private @Nullable String textFor(String expectation) {
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
    public @Nullable Secret asSecret() {
        sensitive = true;
        String t = textFor("a string");
        return t == null ? null : Secret.of(t);
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
