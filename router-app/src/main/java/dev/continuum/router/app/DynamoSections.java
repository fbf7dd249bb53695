package dev.continuum.router.app;

import dev.continuum.router.core.config.DynamoSection;
import java.util.List;

/**
 * The {@code dynamo:} sections this build binds, one per Dynamo module. A module adds its section
 * here when it lands; YAML for a section not listed is reported as inactive, never lost.
 */
final class DynamoSections {
    private DynamoSections() {
    }

    static List<DynamoSection<?>> all() {
        return List.of();
    }
}
