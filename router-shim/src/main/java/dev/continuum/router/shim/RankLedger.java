package dev.continuum.router.shim;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The unanswered dispatches of one (worker, dp_rank), as time buckets (see {@link DispatchLedger} for the
 * rules), kept in a ring of {@link #SLOTS} preallocated mutable slots: a pick that lands on the rank updates a
 * slot in place, so recording a dispatch allocates nothing at steady state.
 *
 * <p><b>Sequence-stamped slots.</b> Buckets are numbered by a sequence; bucket {@code q} lives in slot
 * {@code q % SLOTS}, whose control word carries the bucket's stamp (the sequence's low 32 bits), an
 * initializing flag, whether the bucket is wide, a count of writers inside it, and its open stall-eligible
 * requests. Readers scan the
 * buckets from {@code tail} to {@code head} and validate each slot's stamp before and after reading its
 * fields, so a slot recycled under them is skipped (it was dead: a slot is only reused once its bucket no
 * longer counts).
 *
 * <p><b>Lock-free writers.</b> Opening bucket {@code m} is claimed by one compare-and-set of {@code head}
 * from {@code m - 1}: exactly one writer owns it, and a writer that finds the head bucket still being
 * initialized opens the next one instead of waiting. Joining the head bucket pins its slot (the writer count
 * in the control word) and re-reads {@code head}: a bucket can be recycled only with no writer inside and only
 * once newer buckets exist, so a pinned join that still sees its bucket at the head lands in it exactly once.
 * An ended request decrements its bucket's open count only while the slot still carries its stamp.
 *
 * <p><b>A silent rank.</b> Half of the ring is opened at {@link DispatchLedger#BUCKET_SPAN_NANOS}; once more
 * buckets than that are live (no sample answered them), new buckets span {@link #WIDE_SPAN_NANOS}, so the ring
 * covers {@link DispatchLedger#MAX_AGE_NANOS} of a rank that takes requests but publishes nothing. Only the
 * dispatches of a bucket's first {@code BUCKET_SPAN_NANOS} can mark a stall (a stall is read from a bucket's
 * first dispatch). Should every slot still be live or busy, a dispatch joins the head bucket whatever its
 * span. (Busy means a writer is inside the slot to reuse, for nanoseconds; if a sample also answered the head
 * bucket just then, its earlier dispatches count once more until the rank's next sample.)
 */
final class RankLedger {
    /** Slots per rank (a power of two). */
    static final int SLOTS = 16;
    /** Span of the buckets opened while more than half of the ring is live: the other half covers 30 s. */
    static final long WIDE_SPAN_NANOS = DispatchLedger.MAX_AGE_NANOS / (SLOTS / 2);
    /** What {@link #add} returns for a dispatch that cannot mark a stall (nothing to end). */
    static final long NO_COUNTER = -1;

    private static final int MASK = SLOTS - 1;
    // One slot: five longs of the ring array.
    private static final int WORD = 0;
    private static final int FIRST = 1;
    private static final int LAST = 2;
    private static final int TOKENS = 3;
    private static final int BLOCKS = 4;
    private static final int FIELDS = 5;
    // The control word: stamp (32 bits) | initializing (1) | wide (1) | writers inside (14) | open requests (16).
    private static final long INIT = 1L << 31;
    private static final long WIDE = 1L << 30;
    private static final long PIN = 1L << 16;
    private static final long PINS = 0x3FFFL << 16;
    private static final long OPEN = 0xFFFFL;
    private static final long RETRY = Long.MIN_VALUE;

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle RING;
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle ACTIVE_TOKENS;
    private static final VarHandle ACTIVE_BLOCKS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            RING = lookup.findVarHandle(RankLedger.class, "ring", long[].class);
            HEAD = lookup.findVarHandle(RankLedger.class, "head", long.class);
            TAIL = lookup.findVarHandle(RankLedger.class, "tail", long.class);
            ACTIVE_TOKENS = lookup.findVarHandle(RankLedger.class, "activeTokens", long.class);
            ACTIVE_BLOCKS = lookup.findVarHandle(RankLedger.class, "activeBlocks", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The slots (640 bytes): allocated by the rank's first dispatch, never replaced, so that a fleet's ranks
     * that are never picked cost no more than this object.
     */
    @SuppressWarnings("FieldMayBeFinal") // written through RING
    private volatile long @Nullable [] ring;
    /** The newest bucket's sequence (-1: none yet; the ring exists before it moves). */
    @SuppressWarnings("FieldMayBeFinal") // written through HEAD
    private volatile long head = -1;
    /** Every bucket below this sequence no longer counts. */
    @SuppressWarnings("FieldMayBeFinal") // written through TAIL
    private volatile long tail;

    // The two active-sequence counters a pick reads (RankSequences has the rules and the rest). They live here,
    // beside the fields a pick reads anyway, so scoring a candidate touches no other object for them; the object
    // stays small (48 bytes) because every pick reads one per candidate.
    /** Uncached prompt tokens of the sequences that prefill here and have not produced their first token. */
    @SuppressWarnings("FieldMayBeFinal") // written through ACTIVE_TOKENS
    private volatile long activeTokens;
    /**
     * Active blocks: those counted one per block (requests without hashes, hashed ones until the drainer admits
     * them) plus the distinct hashes of admitted sequences, which the drainer adds as it deduplicates.
     */
    @SuppressWarnings("FieldMayBeFinal") // written through ACTIVE_BLOCKS
    private volatile long activeBlocks;

    /** Active uncached prompt tokens (this router's own prefill backlog on the rank). */
    long activePrefillTokens() {
        return activeTokens;
    }

    /** Active blocks, shared prefixes counted once among the admitted sequences. */
    long activeBlocks() {
        return activeBlocks;
    }

    void addActiveTokens(long delta) {
        ACTIVE_TOKENS.getAndAdd(this, delta);
    }

    void addActiveBlocks(long delta) {
        ACTIVE_BLOCKS.getAndAdd(this, delta);
    }

    private long[] ring() {
        long[] r = ring;
        if (r != null) {
            return r;
        }
        long[] fresh = new long[SLOTS * FIELDS];
        // Each slot starts stamped with a negative sequence, below the first tail: dead, never matched.
        for (int i = 0; i < SLOTS; i++) {
            fresh[i * FIELDS + WORD] = (long) (i - SLOTS) << 32;
        }
        long[] won = (long[]) RING.compareAndExchange(this, (long[]) null, fresh);
        return won == null ? fresh : won;
    }

    /**
     * Records one dispatch at {@code now} and returns the bucket ticket its owner passes to {@link #end} when
     * the request ends, or {@link #NO_COUNTER} when the dispatch cannot count toward a stall.
     *
     * @param lastSampleNanos receipt time of the rank's latest sample, or {@link DispatchLedger#NO_SAMPLE}
     */
    long add(long tokens, long blocks, boolean stallEligible, long lastSampleNanos, long now) {
        long[] r = ring();
        boolean mayStall = stallEligible && blocks >= DispatchLedger.STALL_MIN_BLOCKS;
        while (true) {
            long h = head;
            int at = slot(h);
            long w = h < 0 ? 0 : word(r, at);
            long result;
            if (h >= 0 && ready(w, h)) {
                long first = (long) SLOT.getAcquire(r, at + FIRST);
                boolean sampleSinceOpened = lastSampleNanos != DispatchLedger.NO_SAMPLE && lastSampleNanos - first > 0;
                long span = (w & WIDE) != 0 ? WIDE_SPAN_NANOS : DispatchLedger.BUCKET_SPAN_NANOS;
                result = !sampleSinceOpened && now - first < span
                        ? join(r, at, h, w, tokens, blocks, mayStall && now - first < DispatchLedger.BUCKET_SPAN_NANOS,
                                now)
                        : open(r, h, tokens, blocks, mayStall, lastSampleNanos, now);
            } else {
                result = open(r, h, tokens, blocks, mayStall, lastSampleNanos, now);
            }
            if (result != RETRY) {
                return result;
            }
        }
    }

    /** Ends one stall-eligible request of bucket {@code ticket} (from {@link #add}); nothing if it was recycled. */
    void end(long ticket) {
        long[] r = ring;
        if (r == null) {
            return;
        }
        int at = slot(ticket);
        while (true) {
            long w = word(r, at);
            if (stamp(w) != (int) ticket || (w & OPEN) == 0 || SLOT.compareAndSet(r, at + WORD, w, w - 1)) {
                return;
            }
        }
    }

    /** Unanswered prompt tokens (the prefill backlog the ledger adds), saturating. */
    long pendingTokens(long lastSampleNanos, long now) {
        return pending(TOKENS, lastSampleNanos, now);
    }

    /** Unanswered KV blocks (the decode backlog the ledger adds), saturating. */
    long pendingBlocks(long lastSampleNanos, long now) {
        return pending(BLOCKS, lastSampleNanos, now);
    }

    /** Whether a counted, open, stall-eligible dispatch has gone unanswered for five seconds. */
    boolean stalled(long lastSampleNanos, long now) {
        long h = head;
        long[] r = ring;
        if (r == null) {
            return false;
        }
        for (long q = Math.max(tail, h - MASK); q <= h; q++) {
            int at = slot(q);
            if (!ready(word(r, at), q)) {
                continue;
            }
            long first = (long) SLOT.getAcquire(r, at + FIRST);
            long last = (long) SLOT.getAcquire(r, at + LAST);
            long again = word(r, at);
            if (stamp(again) == (int) q && counts(last, lastSampleNanos, now)
                    && now - first >= DispatchLedger.STALL_AFTER_NANOS && (again & OPEN) > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Moves past the buckets that aged out (only age is known here, not the latest sample: answered buckets go
     * when the rank's next bucket opens) and returns whether none is left.
     */
    boolean trim(long now) {
        long h = head;
        long[] r = ring;
        if (r != null) {
            advanceTail(r, h, DispatchLedger.NO_SAMPLE, now);
        }
        return tail > h;
    }

    boolean isEmpty() {
        return tail > head;
    }

    /** Buckets held between tail and head (each possibly answered for a reader with a newer sample). */
    int bucketCount() {
        long h = head;
        long[] r = ring;
        int n = 0;
        for (long q = Math.max(tail, h - MASK); r != null && q <= h; q++) {
            if (ready(word(r, slot(q)), q)) {
                n++;
            }
        }
        return n;
    }

    /** Bytes of one rank's ring array (16-byte header, five longs per slot), allocated once per picked rank. */
    static final int RING_BYTES = 16 + SLOTS * FIELDS * Long.BYTES;

    /** Whether the rank was ever dispatched to (its ring exists). */
    boolean hasRing() {
        return ring != null;
    }

    /** Test access: open stall-eligible requests of the buckets that count. */
    int openRequests(long lastSampleNanos, long now) {
        long h = head;
        long[] r = ring;
        int n = 0;
        for (long q = Math.max(tail, h - MASK); r != null && q <= h; q++) {
            int at = slot(q);
            long w = word(r, at);
            if (ready(w, q) && counts((long) SLOT.getAcquire(r, at + LAST), lastSampleNanos, now)
                    && stamp(word(r, at)) == (int) q) {
                n += (int) (w & OPEN);
            }
        }
        return n;
    }

    private long pending(int field, long lastSampleNanos, long now) {
        long h = head;
        long[] r = ring;
        long sum = 0;
        for (long q = Math.max(tail, h - MASK); r != null && q <= h; q++) {
            int at = slot(q);
            if (!ready(word(r, at), q)) {
                continue;
            }
            long last = (long) SLOT.getAcquire(r, at + LAST);
            long value = (long) SLOT.getAcquire(r, at + field);
            if (stamp(word(r, at)) == (int) q && counts(last, lastSampleNanos, now)) {
                sum = LoadCosts.add(sum, value);
            }
        }
        return sum;
    }

    /** Joins bucket {@code h} (read with control word {@code w}), or RETRY when it stopped being the head. */
    private long join(long[] r, int at, long h, long w, long tokens, long blocks, boolean countOpen, long now) {
        if ((w & PINS) == PINS || !SLOT.compareAndSet(r, at + WORD, w, w + PIN)) {
            return RETRY;
        }
        if (head != h) {
            // A newer bucket opened in between: this one may already count as answered.
            unpin(r, at, false);
            return RETRY;
        }
        addSaturating(r, at + TOKENS, tokens);
        addSaturating(r, at + BLOCKS, blocks);
        long first;
        do {
            first = (long) SLOT.getVolatile(r, at + FIRST);
        } while (now - first < 0 && !SLOT.compareAndSet(r, at + FIRST, first, now));
        long last;
        do {
            last = (long) SLOT.getVolatile(r, at + LAST);
        } while (now - last > 0 && !SLOT.compareAndSet(r, at + LAST, last, now));
        return unpin(r, at, countOpen) ? h : NO_COUNTER;
    }

    /**
     * Opens bucket {@code h + 1} with this dispatch in it, or joins the head bucket when the ring has no dead
     * slot left; RETRY when another writer moved the head first.
     */
    private long open(long[] r, long h, long tokens, long blocks, boolean mayStall, long lastSampleNanos,
            long now) {
        long m = h + 1;
        int at = slot(m);
        long w = word(r, at);
        int older = (int) m - stamp(w);
        if (older <= 0) {
            return RETRY; // the slot already holds bucket m or later: this writer's head was stale
        }
        long oldSeq = m - older;
        boolean busy = (w & (INIT | PINS)) != 0;
        if (busy || (oldSeq >= tail && counts((long) SLOT.getAcquire(r, at + LAST), lastSampleNanos, now))) {
            // Every slot still counts or a writer is inside the oldest: the head bucket takes the dispatch
            // whatever its span, without stall eligibility.
            int headAt = slot(h);
            long hw = word(r, headAt);
            return ready(hw, h) ? join(r, headAt, h, hw, tokens, blocks, false, now) : RETRY;
        }
        if (!HEAD.compareAndSet(this, h, m)) {
            return RETRY;
        }
        // This writer owns bucket m. Stamp the slot unless a later opener recycled it meanwhile (then retry:
        // nothing of this dispatch was written). Writers still counted inside are stale joiners that saw the
        // head move and leave without writing; their count is kept so that their leaving stays exact.
        while (true) {
            long cur = word(r, at);
            if (stamp(cur) != stamp(w)) {
                return RETRY;
            }
            if (SLOT.compareAndSet(r, at + WORD, cur, ((long) (int) m << 32) | INIT | (cur & PINS))) {
                break;
            }
        }
        boolean wide = advanceTail(r, h, lastSampleNanos, now) >= SLOTS / 2;
        SLOT.setRelease(r, at + FIRST, now);
        SLOT.setRelease(r, at + LAST, now);
        SLOT.setRelease(r, at + TOKENS, tokens);
        SLOT.setRelease(r, at + BLOCKS, blocks);
        while (true) {
            long cur = word(r, at);
            long next = (cur & ~INIT) + (wide ? WIDE : 0) + (mayStall ? 1 : 0);
            if (SLOT.compareAndSet(r, at + WORD, cur, next)) {
                return mayStall ? m : NO_COUNTER;
            }
        }
    }

    /**
     * Moves {@code tail} past the leading buckets up to {@code h} that no longer count and returns how many of
     * them still do. A bucket with a writer inside, or still being opened, counts.
     */
    private int advanceTail(long[] r, long h, long lastSampleNanos, long now) {
        long from = Math.max(tail, h - MASK);
        long newTail = from;
        boolean leading = true;
        int live = 0;
        for (long q = from; q <= h; q++) {
            int at = slot(q);
            long w = word(r, at);
            int diff = stamp(w) - (int) q;
            boolean dead;
            if (diff > 0) {
                dead = true; // recycled for a newer bucket
            } else if (diff < 0 || (w & (INIT | PINS)) != 0) {
                dead = false; // being opened, or written
            } else {
                dead = !counts((long) SLOT.getAcquire(r, at + LAST), lastSampleNanos, now);
            }
            if (dead && leading) {
                newTail = q + 1;
            } else {
                leading = false;
                if (!dead) {
                    live++;
                }
            }
        }
        long t;
        do {
            t = tail;
        } while (newTail > t && !TAIL.compareAndSet(this, t, newTail));
        return live;
    }

    /** Leaves the slot; counts one open request when asked and there is room. */
    private static boolean unpin(long[] r, int at, boolean countOpen) {
        while (true) {
            long w = word(r, at);
            boolean counted = countOpen && (w & OPEN) != OPEN;
            if (SLOT.compareAndSet(r, at + WORD, w, w - PIN + (counted ? 1 : 0))) {
                return counted;
            }
        }
    }

    private static void addSaturating(long[] r, int index, long value) {
        while (true) {
            long v = (long) SLOT.getVolatile(r, index);
            if (SLOT.compareAndSet(r, index, v, LoadCosts.add(v, value))) {
                return;
            }
        }
    }

    private static long word(long[] r, int at) {
        return (long) SLOT.getVolatile(r, at + WORD);
    }

    private static int slot(long seq) {
        return ((int) seq & MASK) * FIELDS;
    }

    private static int stamp(long word) {
        return (int) (word >>> 32);
    }

    /** Whether the slot's word holds bucket {@code seq}, fully written. */
    private static boolean ready(long word, long seq) {
        return stamp(word) == (int) seq && (word & INIT) == 0;
    }

    private static boolean counts(long last, long lastSampleNanos, long now) {
        // A sample received after the bucket's last dispatch already reflects all of it (no sample came
        // between its first and last dispatch, by construction).
        boolean answered = lastSampleNanos != DispatchLedger.NO_SAMPLE && lastSampleNanos - last > 0;
        return !answered && now - last < DispatchLedger.MAX_AGE_NANOS;
    }
}
