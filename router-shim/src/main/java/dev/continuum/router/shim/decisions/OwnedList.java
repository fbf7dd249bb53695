package dev.continuum.router.shim.decisions;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * An unmodifiable list over an array built at its exact size for one record and never written again, so a
 * record's candidates cost one array and no defensive copy.
 */
final class OwnedList<E> extends AbstractList<E> implements RandomAccess {
    private final E[] items;

    OwnedList(E[] items) {
        this.items = items;
    }

    @Override
    public E get(int index) {
        return items[index];
    }

    @Override
    public int size() {
        return items.length;
    }
}
