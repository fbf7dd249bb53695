package dev.continuum.router.discovery.reducer;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Keys refused at a keyspace's capacity, per keyspace in the order they were first refused. Only the key is
 * kept (values can be 16 MiB each): when room frees, the watcher reads the oldest refused keys again from the
 * source. Bounded per keyspace; a key refused while the memory is full is not remembered and waits for its
 * next put or the next resync.
 */
final class RefusedKeys {
    private final int maxPerKeyspace;
    private final EnumMap<Keyspace, LinkedHashSet<String>> refused = new EnumMap<>(Keyspace.class);

    RefusedKeys(int maxPerKeyspace) {
        this.maxPerKeyspace = maxPerKeyspace;
        for (Keyspace keyspace : Keyspace.values()) {
            refused.put(keyspace, new LinkedHashSet<>());
        }
    }

    private LinkedHashSet<String> keysOf(Keyspace keyspace) {
        return Objects.requireNonNull(refused.get(keyspace)); // the constructor fills every keyspace
    }

    /**
     * Remembers a refusal; a key already remembered keeps its place.
     *
     * @return whether the key is newly refused (log and count it); true every time for a key the full memory
     *         cannot take, as before remembering existed
     */
    boolean add(Keyspace keyspace, String key) {
        LinkedHashSet<String> keys = keysOf(keyspace);
        if (keys.contains(key)) {
            return false;
        }
        if (keys.size() < maxPerKeyspace) {
            keys.add(key);
        }
        return true;
    }

    void remove(Keyspace keyspace, String key) {
        keysOf(keyspace).remove(key);
    }

    boolean contains(Keyspace keyspace, String key) {
        return keysOf(keyspace).contains(key);
    }

    /** Forgets every key a resync no longer lists. */
    void retainAll(Set<String> present) {
        for (LinkedHashSet<String> keys : refused.values()) {
            keys.retainAll(present);
        }
    }

    /** The oldest {@code room} refused keys of {@code keyspace}. */
    void oldest(Keyspace keyspace, int room, List<String> into) {
        Iterator<String> it = keysOf(keyspace).iterator();
        for (int i = 0; i < room && it.hasNext(); i++) {
            into.add(it.next());
        }
    }

    /** Every remembered key of {@code keyspace}, oldest first (a copy). */
    List<String> all(Keyspace keyspace) {
        return new ArrayList<>(keysOf(keyspace));
    }

    int size(Keyspace keyspace) {
        return keysOf(keyspace).size();
    }
}
