package dev.continuum.router.core.config;

import java.util.Map;

/**
 * {@code dynamo}: the switch for the Dynamo subsystems, plus their sections ({@code discovery},
 * {@code load}, {@code shim}, {@code kv}, {@code event_bus}). Core parses only {@code enabled};
 * each later module registers a {@link DynamoSection} that binds, validates and diffs its own
 * part, so the shape of {@code dynamo.discovery} lives beside the code that uses it.
 *
 * @param sections bound values keyed by {@link DynamoSection#key()}; a section whose module is not
 *                 registered in this build is absent (its YAML is reported as inactive, never lost)
 */
public record DynamoConfig(boolean enabled, Map<String, Object> sections) {
    public DynamoConfig {
        sections = Map.copyOf(sections);
    }

    public static DynamoConfig disabled() {
        return new DynamoConfig(false, Map.of());
    }

    /** The bound value of a registered section, or its defaults when the YAML omitted it. */
    public <T> T section(DynamoSection<T> section) {
        Object value = sections.get(section.key());
        return value == null ? section.defaults() : section.type().cast(value);
    }
}
