package dev.continuum.router.shim.decisions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The newest {@code capacity} records, by id: record {@code id} lives in slot {@code id % capacity} until a
 * newer one takes the slot. Each slot is a {@link RecordSlot} created by the first record that lands in it and
 * reused in place by every later one, which the recorder fills directly ({@link #claim}), so a full ring keeps a
 * fixed amount of memory and taking a record allocates nothing. Writers never wait on each other (a slot another writer is copying into is left to it) and readers
 * never lock: they validate a slot's sequence word around their read and check the id.
 */
final class DecisionRing {
    private final AtomicReferenceArray<@Nullable RecordSlot> slots;
    private final int capacity;

    DecisionRing(int capacity) {
        this.capacity = capacity;
        this.slots = new AtomicReferenceArray<>(capacity);
    }

    int capacity() {
        return capacity;
    }

    /**
     * Copies draft {@code d} into its slot; returns the estimated bytes of the record it displaced (0 for none),
     * or -1 when the draft was not kept (see {@link #claim}).
     */
    int put(RecordSlot d) {
        RecordSlot s = claim(d.id);
        if (s == null) {
            return -1;
        }
        int displaced = s.displaced;
        s.copyFrom(d);
        s.publish();
        return displaced;
    }

    /**
     * Claims the slot of record {@code id} for a writer to fill in place and {@link RecordSlot#publish}; null when
     * the record is not kept: another writer is filling the slot just then (a record of the same slot a ring's
     * length apart, so one of the two would leave the ring at once), or the slot already holds a newer record.
     */
    @Nullable RecordSlot claim(long id) {
        int at = slot(id);
        RecordSlot s = slots.get(at);
        if (s == null) {
            RecordSlot fresh = new RecordSlot();
            s = slots.compareAndExchange(at, null, fresh);
            s = s == null ? fresh : s;
        }
        if (!s.claim()) {
            return null;
        }
        if (s.id >= id) {
            s.release();
            return null;
        }
        s.displaced = s.id < 0 ? 0 : s.estimatedBytes;
        return s;
    }

    /** The slot holding record {@code id} when it was last written, or null; the caller validates its read. */
    @Nullable RecordSlot slotOf(long id) {
        return id < 0 ? null : slots.get(slot(id));
    }

    @Nullable DecisionRecord get(long id) {
        RecordSlot s = slotOf(id);
        if (s == null) {
            return null;
        }
        long v = s.readBegin();
        if ((v & 1) != 0 || s.id != id) {
            return null;
        }
        DecisionRecord r = s.toRecord();
        return s.readValid(v) ? r : null;
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
