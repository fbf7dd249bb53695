package dev.continuum.router.core.config;

/**
 * A part of {@code dynamo:} owned by a later module ({@code discovery}, {@code load}, ...). The module
 * registers one instance with the config loader; the loader hands it the YAML subtree, which it
 * binds and validates with the same path-carrying problem reporting as core sections, and the
 * reload planner asks it how a change takes effect. The readback ({@code config show}, {@code GET /admin/config})
 * writes the bound record with Jackson ({@link ConfigRenderer}): its components are the YAML keys in snake_case,
 * null ones are left out, and {@link Secret}s are masked; a record whose YAML shape differs says so with
 * Jackson annotations ({@code @JsonInclude(NON_EMPTY)} for a list the YAML omits when empty, for example).
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
}
