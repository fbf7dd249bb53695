package dev.continuum.router.discovery.reducer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Values kept in an array sorted by their identity. A change moves at most the tail of one array (a 64 KiB
 * memmove at 16,384 workers), and publishing copies the array in one go: far cheaper than walking a tree's
 * 16,384 scattered nodes on every publish. Not thread-safe: owned by the reducer.
 */
final class SortedList<K extends Comparable<K>, V> {
    private final ArrayList<V> values = new ArrayList<>();
    private final Function<V, K> identity;

    SortedList(Function<V, K> identity) {
        this.identity = identity;
    }

    @Nullable V get(K key) {
        int at = indexOf(key);
        return at >= 0 ? values.get(at) : null;
    }

    /** Inserts or replaces; returns the value replaced, if any. */
    @Nullable V put(V value) {
        int at = indexOf(identity.apply(value));
        if (at >= 0) {
            return values.set(at, value);
        }
        values.add(-at - 1, value);
        return null;
    }

    @Nullable V remove(K key) {
        int at = indexOf(key);
        return at >= 0 ? values.remove(at) : null;
    }

    /** An immutable copy, in identity order. */
    List<V> snapshot() {
        return List.copyOf(values);
    }

    int size() {
        return values.size();
    }

    private int indexOf(K key) {
        int low = 0;
        int high = values.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            int order = identity.apply(values.get(middle)).compareTo(key);
            if (order < 0) {
                low = middle + 1;
            } else if (order > 0) {
                high = middle - 1;
            } else {
                return middle;
            }
        }
        return -(low + 1);
    }
}
