package dev.continuum.router.core.config;

/**
 * A part of {@code dynamo:} owned by a later module ({@code discovery}, {@code load}, ...). The module
 * registers one instance with the config loader; the loader hands it the YAML subtree, which it
 * binds and validates with the same path-carrying problem reporting as core sections, and the
 * reload planner asks it how a change takes effect.
 *
 * @param <T> the immutable record the section binds to
 */
public interface DynamoSection<T> {
    /** The key under {@code dynamo:}, for example {@code "discovery"}. */
    String key();

    Class<T> type();

    /** The value when the YAML omits the section. */
    T defaults();

    /**
     * Binds and validates {@code node} (the subtree at {@code dynamo.<key>}), reporting every problem
     * to {@code problems} with its dotted path. Returns null when an error makes a value impossible.
     */
    @org.jspecify.annotations.Nullable
    T bind(ConfigNode node, Problems problems);

    /** Checks that need other sections (for example that a referenced backend exists). */
    default void crossCheck(T value, RouterConfig config, Problems problems) {
    }

    /** How a change from {@code before} to {@code after} takes effect; only called when they differ. */
    ReloadClass reloadClass(T before, T after);

    /**
     * The section as a readback tree under {@code dynamo.<key>} (for {@code config show} and
     * {@code GET /admin/config}), using the YAML key names so the readback loads back to an equal value.
     *
     * <p>Return {@link java.util.Map}s (String keys, in display order), {@link java.util.List}s, and
     * scalars: String, Number, Boolean, null. Put every credential in as its {@link Secret} object,
     * never as its text: the renderer replaces each {@code Secret} by {@link Secret#MASK}. Durations,
     * {@link ByteSize}, paths, URIs, instants, enums, records, Optionals and collections are also
     * accepted and converted as {@link ConfigRenderer#recordTree} does.
     *
     * <p>The default renders {@code value} with {@link ConfigRenderer#recordTree}: record components
     * become snake_case keys, null components are left out. Override it when the YAML shape differs
     * from the record's.
     */
    default Object render(T value) {
        return ConfigRenderer.recordTree(value);
    }
}
