package dev.continuum.router.shim;

import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The admitted sequences in dispatch order, for expiry and departures: a ring of (object, stamp) entries of
 * {@link ActiveSequences#MAX_SEQUENCES} slots, used by the drainer only. An entry stays until it reaches the head
 * or a compaction drops it; it is live while its object still carries its stamp and was not released. Since
 * at most that many sequences are live at once, compacting a full ring always makes room.
 */
final class SequenceOrder {
    private static final int MASK = ActiveSequences.MAX_SEQUENCES - 1;

    private final @Nullable Sequence[] order = new Sequence[ActiveSequences.MAX_SEQUENCES];
    private final int[] stamps = new int[ActiveSequences.MAX_SEQUENCES];
    private int head;
    private int size;

    void add(Sequence s) {
        if (size == order.length) {
            compact();
        }
        int at = (head + size) & MASK;
        order[at] = s;
        stamps[at] = Sequence.stamp(s.state());
        size++;
    }

    /** The oldest live sequence, dead entries before it dropped; null when none is left. */
    @Nullable Sequence oldest() {
        while (size > 0) {
            Sequence s = order[head];
            if (live(head, s)) {
                return s;
            }
            pop();
        }
        return null;
    }

    /** Drops the head entry. */
    void pop() {
        order[head] = null;
        head = (head + 1) & MASK;
        size--;
    }

    /** Calls {@code action} with every live sequence, oldest first. */
    void forEachLive(Consumer<Sequence> action) {
        for (int i = 0; i < size; i++) {
            int at = (head + i) & MASK;
            Sequence s = order[at];
            if (live(at, s)) {
                action.accept(s);
            }
        }
    }

    private boolean live(int at, @Nullable Sequence s) {
        return s != null && Sequence.stamp(s.state()) == stamps[at] && !s.released;
    }

    private void compact() {
        int kept = 0;
        for (int i = 0; i < size; i++) {
            int at = (head + i) & MASK;
            Sequence s = order[at];
            order[at] = null;
            if (live(at, s)) {
                // kept <= i, so this never overwrites an entry not yet read (the ring is rewritten from head).
                int to = (head + kept) & MASK;
                order[to] = s;
                stamps[to] = stamps[at];
                kept++;
            }
        }
        size = kept;
    }
}
