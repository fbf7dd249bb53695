package dev.continuum.router.core.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A read-only view of one YAML subtree, carrying its dotted path so every problem can name where it
 * is. Implemented by the loader; {@link DynamoSection}s read their part through it.
 *
 * <p><b>Problems.</b> Typed getters report a wrong type or a bad value to the {@link Problems} of the
 * load pass (the same instance handed to {@link DynamoSection#bind}) as
 * {@code path: value (expected: ...)} and return the default, so one pass finds every problem.
 *
 * <p><b>Missing and null.</b> Asking for an absent key gives a node of kind {@link Kind#MISSING};
 * YAML {@code null}, {@code ~} or an empty value gives {@link Kind#NULL}. Every getter returns its
 * default for both without a problem; required keys are checked with {@link #isPresent()}.
 *
 * <p><b>Interpolation.</b> A scalar's text has {@code ${VAR}} / {@code ${VAR:-default}} / {@code $$}
 * resolved when first read; a variable that is unset (and has no default) becomes "" with a warning
 * naming the path and the variable. Values read with {@link #asSecret()} are never shown in messages.
 *
 * <p><b>Unknown keys.</b> Every key asked for with {@link #get} counts as known for its map, present
 * or not. After binding, each present key of a map that was read but never asked for is reported as a
 * warning, with the nearest known key as a suggestion. {@link #entries()} and {@link #markUsed()}
 * mark keys as read for free-form maps and for sections accepted without effect.
 *
 * <p>Scalars are parsed from their text, not from the YAML type: {@code "8080"} is a valid port and
 * {@code 0660} is octal for {@code socket_mode}. Booleans accept {@code true/false}, {@code yes/no},
 * {@code on/off} and {@code 1/0}, in any case. Not thread-safe: one load pass reads a tree.
 */
public interface ConfigNode {
    enum Kind {
        MISSING,
        NULL,
        SCALAR,
        LIST,
        MAP
    }

    /** Dotted path of this node, for example {@code dynamo.discovery.etcd} or {@code backends[2].url}. */
    String path();

    /** Where the value came from ({@code config.yaml:12:5}, {@code environment variable X}), or "". */
    String location();

    Kind kind();

    /** Present and not null. */
    default boolean isPresent() {
        return kind() != Kind.MISSING && kind() != Kind.NULL;
    }

    /**
     * The child at {@code key} (a {@link Kind#MISSING} node when absent). Marks the key as known. On a
     * present node that is not a map, reports {@code path: value (expected: a map)} once.
     */
    ConfigNode get(String key);

    /** The keys present in a map, in document order; empty for other kinds. Marks nothing. */
    List<String> keys();

    /** The elements of a list; empty for missing/null; other kinds report {@code (expected: a list)}. */
    List<ConfigNode> elements();

    /**
     * Every entry of a free-form map (in document order), each marked as known; other present kinds
     * report {@code (expected: a map)}.
     */
    Map<String, ConfigNode> entries();

    /** The whole subtree counts as read (no unknown-key warnings inside it). */
    void markUsed();

    /** The (interpolated) text of a scalar, or null for other kinds; reports nothing. */
    @Nullable String scalar();

    String asString(String defaultValue);

    @Nullable String asStringOrNull();

    /**
     * A file or directory path as text (null when missing/null): a leading {@code ~} or {@code ~/} is the
     * home directory, {@code $HOME} of the load's environment ({@link HomeDirectory}).
     */
    @Nullable String asPathString();

    int asInt(int defaultValue);

    /** An integer in {@code min..max} (inclusive); outside reports {@code (expected: min..max)} or {@code >= min}. */
    int asInt(int defaultValue, int min, int max);

    long asLong(long defaultValue);

    boolean asBool(boolean defaultValue);

    double asDouble(double defaultValue);

    /** {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 1m30s}; a plain integer counts seconds. */
    Duration asDuration(Duration defaultValue);

    /** A duration {@code > 0}. */
    Duration asPositiveDuration(Duration defaultValue);

    /** A duration in {@code min..max} (inclusive). */
    Duration asDuration(Duration defaultValue, Duration min, Duration max);

    /** {@code 1048576}, {@code 512KiB}, {@code 10MiB}, {@code 1GiB}; {@code 10MB}/{@code 10KB} are decimal. */
    ByteSize asByteSize(ByteSize defaultValue);

    /** The scalar as a secret (possibly empty), or null when missing/null. Its value never appears in a message. */
    @Nullable Secret asSecret();

    /** A list of scalars; a non-scalar element is reported and skipped. */
    List<String> asStringList();

    /**
     * A value from a closed vocabulary: {@code parser} maps the text to a value or null, and null
     * reports {@code path: "text" (expected: <expectation>)}.
     */
    <T> T asChoice(T defaultValue, Function<String, @Nullable T> parser, String expectation);

    /** Reports this node's value as an error: {@code path: value (expected: <expectation>)}. */
    void invalid(String expectation);

    /** Reports {@code path: message} as an error. */
    void error(String message);

    /** Reports {@code path: message} as a warning. */
    void warning(String message);

    /** This setting loads but has no effect: a warning, an error in strict mode ({@link Problems#noEffect}). */
    void noEffect(String message);

    default String string(String key, String defaultValue) {
        return get(key).asString(defaultValue);
    }

    default int integer(String key, int defaultValue) {
        return get(key).asInt(defaultValue);
    }

    default boolean bool(String key, boolean defaultValue) {
        return get(key).asBool(defaultValue);
    }

    default double decimal(String key, double defaultValue) {
        return get(key).asDouble(defaultValue);
    }

    default Duration duration(String key, Duration defaultValue) {
        return get(key).asDuration(defaultValue);
    }

    default ByteSize byteSize(String key, ByteSize defaultValue) {
        return get(key).asByteSize(defaultValue);
    }

    default @Nullable Secret secret(String key) {
        return get(key).asSecret();
    }

    default List<ConfigNode> list(String key) {
        return get(key).elements();
    }

    default Map<String, ConfigNode> map(String key) {
        return get(key).entries();
    }
}
