package dev.continuum.router.discovery.reducer;

import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Shares one instance of the strings thousands of records repeat (component and endpoint names, models,
 * worker types): less retained heap, and scans over the fleet compare references instead of chasing each
 * record's own copy. Bounded, because the values are fleet-authored: past {@code capacity} distinct values
 * strings are kept as they are. Not thread-safe: owned by the reducer.
 */
final class StringInterner {
    private final int capacity;
    private final Map<String, String> strings = new HashMap<>();

    StringInterner(int capacity) {
        this.capacity = capacity;
    }

    @Nullable String intern(@Nullable String value) {
        if (value == null) {
            return null;
        }
        String shared = strings.get(value);
        if (shared != null) {
            return shared;
        }
        if (strings.size() < capacity) {
            strings.put(value, value);
        }
        return value;
    }
}
