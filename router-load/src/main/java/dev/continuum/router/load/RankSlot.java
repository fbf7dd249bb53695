package dev.continuum.router.load;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One (worker, dp_rank)'s latest sample at a stable address: the load store writes each sample of the key into
 * the same slot object, so a picker that took the slot once (when it built its candidate index) reads the
 * rank's load from a few fields instead of looking the key up on every pick (see {@code docs/load-signals.md}).
 *
 * <p><b>What it shows.</b> While attached, a slot holds exactly what the store's map holds for its key: the
 * store writes it under the same per-key critical section as the map entry, and hands it out initialized
 * from the map. The store detaches a slot when its key leaves the live set (the worker departed, or its card
 * no longer declares the rank): a detached slot is never written again, and its readers fall back to
 * {@link LoadStore#latest(SampleKey)} until they take the key's new slot. So a slot never shows one worker
 * incarnation's sample where the store would not, and a re-registered worker's key gets a fresh slot.
 *
 * <p><b>Reads without a lock.</b> The hot fields (receipt time, the two backlog fields, whether the sample
 * reports a backlog) are primitives guarded by a sequence number that is odd while a write is under way (a
 * sequence lock with one writer at a time). A reader that meets a write, or a sequence that moved, does not
 * wait: it reads the {@link #sample()} reference instead, which is always consistent on its own.
 *
 * <p>Writers are the store's (one at a time per key); {@link #hold}, {@link #clear} and {@link #detach} are
 * public only for load stores outside this package.
 */
public final class RankSlot {
    /** A backlog field the sample does not carry (the wire's nil: the record refuses negative counters). */
    public static final long ABSENT = -1;

    private static final VarHandle SEQ;

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(RankSlot.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SampleKey key;
    /** Even when the fields below are stable, odd while the writer changes them. */
    @SuppressWarnings("unused") // accessed through SEQ
    private volatile long seq;
    private boolean held;
    private long receivedNanos;
    private long decodeBlocks = ABSENT;
    private long prefillTokens = ABSENT;
    private boolean reportsBacklog;
    private volatile @Nullable LoadSample sample;
    private volatile boolean detached;

    public RankSlot(SampleKey key) {
        this.key = Objects.requireNonNull(key, "key");
    }

    public SampleKey key() {
        return key;
    }

    /** The held sample, or null (none held, or the slot is detached: then ask the store). */
    public @Nullable LoadSample sample() {
        return sample;
    }

    /** Whether the store stopped writing this slot; its readers ask the store by key instead. */
    public boolean detached() {
        return detached;
    }

    /**
     * Copies the slot's current reading into {@code out} and returns true, or returns false when the slot is
     * detached (then {@code out} is unchanged and the caller asks the store). Allocates nothing.
     */
    public boolean read(Reading out) {
        long stamp = (long) SEQ.getAcquire(this);
        if ((stamp & 1) == 0) {
            boolean h = held;
            long received = receivedNanos;
            long decode = decodeBlocks;
            long prefill = prefillTokens;
            boolean backlog = reportsBacklog;
            VarHandle.loadLoadFence();
            if ((long) SEQ.getOpaque(this) == stamp) {
                if (!h && detached) {
                    return false;
                }
                out.set(h, received, decode, prefill, backlog);
                return true;
            }
        }
        // A write is under way or just happened: the reference is consistent by itself.
        LoadSample s = sample;
        if (s == null && detached) {
            return false;
        }
        out.set(s);
        return true;
    }

    /** Holds {@code s} as the key's latest sample. The store's writer only, one at a time per key. */
    public void hold(LoadSample s) {
        if (detached) {
            return;
        }
        Long decode = s.load().decodeBlocks();
        Long prefill = s.load().activePrefillTokens();
        begin();
        held = true;
        receivedNanos = s.receivedNanos();
        decodeBlocks = decode == null ? ABSENT : decode;
        prefillTokens = prefill == null ? ABSENT : prefill;
        reportsBacklog = s.reportsBacklog();
        sample = s;
        end();
    }

    /** The key holds no sample any more. The store's writer only. */
    public void clear() {
        begin();
        held = false;
        decodeBlocks = ABSENT;
        prefillTokens = ABSENT;
        reportsBacklog = false;
        sample = null;
        end();
    }

    /** Stops showing anything: the key left the live set. Terminal. The store's writer only. */
    public void detach() {
        clear();
        detached = true;
    }

    private void begin() {
        long s = (long) SEQ.getOpaque(this);
        SEQ.setOpaque(this, s + 1);
        VarHandle.storeStoreFence(); // the odd sequence is seen before any field it guards changes
    }

    private void end() {
        long s = (long) SEQ.getOpaque(this);
        SEQ.setRelease(this, s + 1); // every field written above is seen before the even sequence
    }

    /**
     * A reader's copy of one slot (or of a {@link LoadSample}): mutable per-thread working space, so that a
     * pick reads each candidate without allocating.
     */
    public static final class Reading {
        private boolean held;
        private long receivedNanos;
        private long decodeBlocks;
        private long prefillTokens;
        private boolean reportsBacklog;

        /** Copies {@code s} (null: no sample). */
        public void set(@Nullable LoadSample s) {
            if (s == null) {
                set(false, 0, ABSENT, ABSENT, false);
                return;
            }
            Long decode = s.load().decodeBlocks();
            Long prefill = s.load().activePrefillTokens();
            set(true, s.receivedNanos(), decode == null ? ABSENT : decode, prefill == null ? ABSENT : prefill,
                    s.reportsBacklog());
        }

        void set(boolean h, long received, long decode, long prefill, boolean backlog) {
            held = h;
            receivedNanos = received;
            decodeBlocks = decode;
            prefillTokens = prefill;
            reportsBacklog = backlog;
        }

        /** Whether a sample is held. */
        public boolean held() {
            return held;
        }

        /** The sample's receipt time on the store's ticker (meaningful when {@link #held}). */
        public long receivedNanos() {
            return receivedNanos;
        }

        /** {@code active_decode_blocks}, else {@code kv_used_blocks}, or {@link #ABSENT}. */
        public long decodeBlocks() {
            return decodeBlocks;
        }

        /** {@code active_prefill_tokens}, or {@link #ABSENT}. */
        public long prefillTokens() {
            return prefillTokens;
        }

        /** {@link LoadSample#reportsBacklog()} of the sample (false when none is held). */
        public boolean reportsBacklog() {
            return reportsBacklog;
        }
    }
}
