package dev.continuum.router.core.config;

import java.util.LinkedHashMap;
import java.util.Map;

/** Binds {@code dynamo}: core reads {@code enabled}; each registered {@link DynamoSection} binds its own key. */
final class DynamoBinder {
    static final String INACTIVE = "section is not handled by this build; it is parsed but inactive";

    private DynamoBinder() {
    }

    static DynamoConfig bind(ConfigNode n, BindContext ctx) {
        boolean enabled = n.get("enabled").asBool(false);
        Map<String, Object> sections = new LinkedHashMap<>();
        for (DynamoSection<?> section : ctx.sections) {
            ConfigNode node = n.get(section.key());
            Object value;
            try {
                // Bound even when the YAML omits it (node is MISSING), so a section can validate its defaults.
                value = section.bind(node, ctx.problems);
            } catch (RuntimeException e) {
                node.error("could not be bound (" + e.getClass().getSimpleName() + ")");
                continue;
            }
            if (value != null) {
                sections.put(section.key(), section.type().cast(value));
            }
        }
        if (n.kind() == ConfigNode.Kind.MAP) {
            for (String key : n.keys()) {
                if (key.equals("enabled") || ctx.sections.stream().anyMatch(s -> s.key().equals(key))) {
                    continue;
                }
                ConfigNode unhandled = n.get(key);
                unhandled.markUsed();
                unhandled.noEffect(INACTIVE);
            }
        }
        return new DynamoConfig(enabled, sections);
    }
}
