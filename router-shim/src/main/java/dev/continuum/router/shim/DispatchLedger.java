package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The requests the router pinned to each (worker, dp_rank) since that rank's last sample (the seed's
 * "Unanswered dispatches" and "Stalled worker" rules).
 *
 * <p>An entry counts while no sample from its rank was received after it was dispatched, and for at most
 * {@link #MAX_AGE_NANOS}. Readers get the key's array from the map without locking; writers replace the
 * array whole inside {@code compute}, dropping answered and aged-out entries as they go. A periodic sweep
 * removes keys whose entries all aged out, so departed workers cannot hold memory past 30 s.
 */
final class DispatchLedger {
    /** The seed's bound on how long an unanswered dispatch counts. */
    static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** The seed's "unanswered for 5 seconds". */
    static final long STALL_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The seed's "a request of two or more blocks". */
    static final long STALL_MIN_BLOCKS = 2;
    /**
     * Entries held per rank. A rank taking more than this many requests between two samples already
     * carries a backlog far above any peer's, so dropping the oldest entry changes no decision that matters
     * and keeps a burst from growing the ledger without bound.
     */
    static final int MAX_ENTRIES_PER_KEY = 1024;
    private static final long SWEEP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One pinned request on one rank. {@code ended} is written by the request's owner, read by pickers. */
    static final class Entry {
        final long tokens;
        final long blocks;
        final long dispatchedNanos;
        /** False for the decode worker of a prefill/decode pair: it receives the request only after prefill. */
        final boolean stallEligible;
        volatile boolean ended;

        Entry(long tokens, long blocks, long dispatchedNanos, boolean stallEligible) {
            this.tokens = tokens;
            this.blocks = blocks;
            this.dispatchedNanos = dispatchedNanos;
            this.stallEligible = stallEligible;
        }
    }

    /** What the unanswered entries of one rank add up to. */
    record Pending(long tokens, long blocks, boolean stalled) {
        static final Pending NONE = new Pending(0, 0, false);
    }

    private static final Entry[] EMPTY = new Entry[0];
    /**
     * "The rank holds no sample". A real receipt time equal to it would be read as no sample, which only
     * lets its dispatches count until they age out: harmless, and one nanosecond in 2^64.
     */
    static final long NO_SAMPLE = Long.MIN_VALUE;

    private final ConcurrentHashMap<SampleKey, Entry[]> entries = new ConcurrentHashMap<>();
    private final AtomicLong lastSweep;

    DispatchLedger(long nowNanos) {
        this.lastSweep = new AtomicLong(nowNanos);
    }

    /** {@link #pending(SampleKey, long, long)} for a rank that holds no sample. */
    Pending pending(SampleKey key, long now) {
        return pending(key, NO_SAMPLE, now);
    }

    /**
     * @param lastSampleNanos receipt time of the rank's latest sample, or {@link #NO_SAMPLE} when it holds none
     *                        (a primitive: this runs once per candidate rank on every decision)
     */
    Pending pending(SampleKey key, long lastSampleNanos, long now) {
        Entry[] held = entries.get(key);
        if (held == null) {
            return Pending.NONE;
        }
        long tokens = 0;
        long blocks = 0;
        boolean stalled = false;
        for (Entry e : held) {
            if (!counts(e, lastSampleNanos, now)) {
                continue;
            }
            tokens += e.tokens;
            blocks += e.blocks;
            if (e.stallEligible && !e.ended && e.blocks >= STALL_MIN_BLOCKS
                    && now - e.dispatchedNanos >= STALL_AFTER_NANOS) {
                stalled = true;
            }
        }
        return tokens == 0 && blocks == 0 && !stalled ? Pending.NONE : new Pending(tokens, blocks, stalled);
    }

    void add(SampleKey key, Entry entry, long lastSampleNanos, long now) {
        entries.compute(key, (k, held) -> {
            Entry[] live = held == null ? EMPTY : retained(held, lastSampleNanos, now);
            int keep = Math.min(live.length, MAX_ENTRIES_PER_KEY - 1);
            Entry[] next = Arrays.copyOfRange(live, live.length - keep, live.length + 1);
            next[keep] = entry;
            return next;
        });
        maybeSweep(now);
    }

    int keys() {
        return entries.size();
    }

    private static boolean counts(Entry e, long lastSampleNanos, long now) {
        // A sample received after the dispatch already reflects it (or the worker is demonstrably alive).
        boolean answered = lastSampleNanos != NO_SAMPLE && lastSampleNanos - e.dispatchedNanos > 0;
        return !answered && now - e.dispatchedNanos < MAX_AGE_NANOS;
    }

    private static Entry[] retained(Entry[] held, long lastSampleNanos, long now) {
        int n = 0;
        for (Entry e : held) {
            if (counts(e, lastSampleNanos, now)) {
                n++;
            }
        }
        if (n == held.length) {
            return held;
        }
        Entry[] out = new Entry[n];
        int i = 0;
        for (Entry e : held) {
            if (counts(e, lastSampleNanos, now)) {
                out[i++] = e;
            }
        }
        return out;
    }

    private void maybeSweep(long now) {
        long last = lastSweep.get();
        if (now - last < SWEEP_INTERVAL_NANOS || !lastSweep.compareAndSet(last, now)) {
            return;
        }
        // Only age is known here (not the latest sample); answered entries go on the key's next add.
        entries.replaceAll((k, held) -> retained(held, NO_SAMPLE, now));
        entries.values().removeIf(held -> held.length == 0);
    }
}
