package dev.continuum.router.shim;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * One dispatched request while it is active: a pooled, reused object (so recording a dispatch allocates
 * nothing at steady state), identified for each use by the stamp in its state word. A handle
 * ({@link TrackedDispatch}) that outlives its use finds another stamp and does nothing.
 *
 * <p>The state word: stamp (bits 32..63) | flags (16..31) | queue entries not yet drained (0..15). The picking
 * thread fills the fields, then publishes them with the state word; every later change is one compare-and-set
 * on that word, so a first token, the request's end and the drainer's expiry race safely and only one of them
 * applies each step. The object returns to the pool only once it ended, the drainer released it, and no queue
 * entry still names it.
 */
final class Sequence {
    static final long FIRST = 1L << 16;
    static final long ENDED = 1L << 17;
    private static final int REASON_SHIFT = 20;
    static final long REASON = 0xFL << REASON_SHIFT;
    static final long ENTRIES = 0xFFFFL;
    static final long ENTRY = 1L;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Sequence.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("FieldMayBeFinal") // written through STATE
    private volatile long state;
    /** The tracker this object belongs to (its pool). */
    final ActiveSequences owner;

    // Written by the picking thread before the state word publishes them; read-only until the object is recycled.
    @Nullable RankSequences decode;
    /** The prefill rank of a disaggregated pair, or null (the decode rank prefills). */
    @Nullable RankSequences prefill;
    @Nullable RankLedger decodeLedger;
    @Nullable RankLedger prefillLedger;
    long decodeTicket = RankLedger.NO_COUNTER;
    long prefillTicket = RankLedger.NO_COUNTER;
    /** Uncached prompt tokens, held by the rank that prefills until the first token. */
    long prefillTokens;
    long decodeBlocks;
    long prefillBlocks;
    /** Hashes whose blocks the drainer deduplicates on each rank, or null (counted one per block). */
    @Nullable BlockHashes decodeHashes;
    @Nullable BlockHashes prefillHashes;
    /** Hashed blocks a prefill in flight on the rank already counts, not charged raw before admission. */
    long decodeHeld;
    long prefillHeld;
    long dispatchedAt;

    // Drainer-owned.
    long id;
    boolean admitted;
    boolean decodeShared;
    boolean prefillShared;
    boolean firstTold;
    boolean prefillReleased;
    boolean released;

    Sequence(ActiveSequences owner) {
        this.owner = owner;
    }

    long state() {
        return state;
    }

    void publish(long value) {
        state = value;
    }

    boolean cas(long expected, long next) {
        return STATE.compareAndSet(this, expected, next);
    }

    static int stamp(long state) {
        return (int) (state >>> 32);
    }

    static SequenceEnd reason(long state) {
        return SequenceEnd.VALUES[(int) ((state & REASON) >>> REASON_SHIFT)];
    }

    static long reasonBits(SequenceEnd reason) {
        return (long) reason.ordinal() << REASON_SHIFT;
    }

    /** The rank that prefills: the pair's prefill rank, else the decode rank. */
    @Nullable RankSequences prefilling() {
        return prefill != null ? prefill : decode;
    }

    /** Clears what the previous use referenced (so a pooled object pins no rank or prompt) and moves the stamp. */
    void recycle() {
        decode = null;
        prefill = null;
        decodeLedger = null;
        prefillLedger = null;
        decodeHashes = null;
        prefillHashes = null;
        admitted = false;
        decodeShared = false;
        prefillShared = false;
        firstTold = false;
        prefillReleased = false;
        released = false;
        state = ((long) (stamp(state) + 1)) << 32;
    }
}
