package dev.continuum.router.discovery.reducer;

import java.util.HashSet;
import java.util.Set;

/**
 * Remembers which keys were already logged, so a bad record that stays bad logs once. Bounded: fleet input
 * can mint any number of distinct keys, so past {@code capacity} the memory is cleared (some lines repeat,
 * memory does not grow).
 */
final class LogOnce<K> {
    private final int capacity;
    private final Set<K> seen = new HashSet<>();

    LogOnce(int capacity) {
        this.capacity = capacity;
    }

    /** True the first time {@code key} is offered (since it was forgotten). */
    boolean first(K key) {
        if (seen.contains(key)) {
            return false;
        }
        if (seen.size() >= capacity) {
            seen.clear();
        }
        seen.add(key);
        return true;
    }

    void forget(K key) {
        seen.remove(key);
    }
}
