package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code dynamo}: the switch for the Dynamo subsystems, plus their sections ({@code discovery},
 * {@code load}, {@code shim}, {@code kv}, {@code event_bus}). Core parses only {@code enabled};
 * each later module registers a {@link DynamoSection} that binds, validates and diffs its own
 * part, so the shape of {@code dynamo.discovery} lives beside the code that uses it.
 *
 * @param sections bound values keyed by {@link DynamoSection#key()}, in registration order (the readback's
 *                 order); a section whose module is not registered in this build is absent (its YAML is
 *                 reported as inactive, never lost)
 */
public record DynamoConfig(boolean enabled, @JsonIgnore Map<String, Object> sections) {
    public DynamoConfig {
        sections.forEach((key, value) -> Objects.requireNonNull(value, key));
        sections = Collections.unmodifiableMap(new LinkedHashMap<>(sections));
    }

    public static DynamoConfig disabled() {
        return new DynamoConfig(false, Map.of());
    }

    /** The bound value of a registered section, or its defaults when the YAML omitted it. */
    public <T> T section(DynamoSection<T> section) {
        Object value = sections.get(section.key());
        return value == null ? section.defaults() : section.type().cast(value);
    }

    /**
     * The bound value of another module's section, found by its record type rather than its key: a section
     * that reads another one's value (the shim reads discovery's namespaces) depends on that module's type
     * anyway. Empty when no registered section binds to {@code type}.
     */
    public <T> Optional<T> find(Class<T> type) {
        for (Object value : sections.values()) {
            if (type.isInstance(value)) {
                return Optional.of(type.cast(value));
            }
        }
        return Optional.empty();
    }

    /** The readback writes each section under its key, beside {@code enabled}. */
    @JsonAnyGetter
    Map<String, Object> readbackSections() {
        return sections;
    }
}
