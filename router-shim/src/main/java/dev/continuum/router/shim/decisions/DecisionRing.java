package dev.continuum.router.shim.decisions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The newest {@code capacity} records, by id: record {@code id} lives in slot {@code id % capacity} until a
 * newer one takes the slot. Writers never wait on each other (one atomic swap each) and readers never lock; a
 * reader may see a slot's newer record, and checks the id.
 */
final class DecisionRing {
    private final AtomicReferenceArray<@Nullable DecisionRecord> slots;
    private final int capacity;

    DecisionRing(int capacity) {
        this.capacity = capacity;
        this.slots = new AtomicReferenceArray<>(capacity);
    }

    int capacity() {
        return capacity;
    }

    /** Stores {@code r} and returns the record it displaced, or null. */
    @Nullable DecisionRecord put(DecisionRecord r) {
        return slots.getAndSet(slot(r.id()), r);
    }

    @Nullable DecisionRecord get(long id) {
        if (id < 0) {
            return null;
        }
        DecisionRecord r = slots.get(slot(id));
        return r != null && r.id() == id ? r : null;
    }

    /**
     * Up to {@code limit} records matching {@code filter}, newest first, with ids below {@code beforeId}, scanning
     * back from {@code newestId}.
     */
    List<DecisionRecord> newest(long newestId, long beforeId, int limit, Predicate<DecisionRecord> filter) {
        List<DecisionRecord> out = new ArrayList<>(Math.min(limit, 64));
        long from = Math.min(newestId, beforeId - 1);
        long oldest = Math.max(0, newestId - capacity + 1);
        for (long id = from; id >= oldest && out.size() < limit; id--) {
            DecisionRecord r = get(id);
            if (r != null && filter.test(r)) {
                out.add(r);
            }
        }
        return out;
    }

    private int slot(long id) {
        return (int) Math.floorMod(id, (long) capacity);
    }
}
