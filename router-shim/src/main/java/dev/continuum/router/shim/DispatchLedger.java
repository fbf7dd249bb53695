package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The requests the router pinned to each (worker, dp_rank) since that rank's last sample (the seed's
 * "Unanswered dispatches" and "Stalled worker" rules).
 *
 * <p>A dispatch counts while no sample from its rank was received after it, and for at most
 * {@link #MAX_AGE_NANOS}. Dispatches are kept in time buckets, not one by one: at thousands of requests per
 * second a rank collects hundreds of dispatches between two samples, and every pick reads every candidate's
 * backlog, so per-dispatch entries made each pick cost O(requests since the last sample). A bucket holds the
 * dispatches to one rank within {@link #BUCKET_SPAN_NANOS} between which no sample was received, so a later
 * sample answers all of a bucket or none of it. Readers get the key's bucket array from the map without
 * locking; writers replace the array whole inside {@code compute}. A periodic sweep removes keys whose
 * buckets all aged out, so departed workers cannot hold memory past 30 s.
 *
 * <p>Bucketing trades exactness at the edges for that: a bucket's age is its newest dispatch's (a dispatch
 * counts at most one span longer than 30 s), and a bucket is stall-eligible from its oldest dispatch (a stall
 * can be seen at most one span before 5 s).
 */
final class DispatchLedger {
    /** The seed's bound on how long an unanswered dispatch counts. */
    static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** The seed's "unanswered for 5 seconds". */
    static final long STALL_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The seed's "a request of two or more blocks". */
    static final long STALL_MIN_BLOCKS = 2;
    /** Dispatches to one rank this close together (and with no sample between them) share a bucket. */
    static final long BUCKET_SPAN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * Buckets held per rank: 30 s of 20 ms buckets is 1,500, so the cap only bites when the clock runs
     * backwards; the oldest bucket goes first.
     */
    static final int MAX_BUCKETS_PER_KEY = 2048;
    /**
     * "The rank holds no sample". A real receipt time equal to it would be read as no sample, which only
     * lets its dispatches count until they age out: harmless, and one nanosecond in 2^64.
     */
    static final long NO_SAMPLE = Long.MIN_VALUE;
    private static final long SWEEP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One pinned request on one rank, ended once by its owner (served, refused, failed, cancelled). */
    static final class Entry {
        final long tokens;
        final long blocks;
        final long dispatchedNanos;
        /** False for the decode worker of a prefill/decode pair: it receives the request only after prefill. */
        final boolean stallEligible;
        private final AtomicBoolean ended = new AtomicBoolean();
        /** The open-request count of the bucket that holds this entry, when it counts toward a stall. */
        private volatile AtomicInteger openInBucket;

        Entry(long tokens, long blocks, long dispatchedNanos, boolean stallEligible) {
            this.tokens = tokens;
            this.blocks = blocks;
            this.dispatchedNanos = dispatchedNanos;
            this.stallEligible = stallEligible;
        }

        /** The request's plan ended: it no longer counts toward a stall (its backlog stays until answered). */
        void end() {
            if (ended.compareAndSet(false, true)) {
                AtomicInteger open = openInBucket;
                if (open != null) {
                    open.decrementAndGet();
                }
            }
        }

        private boolean countsTowardStall() {
            return stallEligible && blocks >= STALL_MIN_BLOCKS;
        }
    }

    /**
     * Dispatches to one rank between {@code firstNanos} and {@code lastNanos} with no sample received in
     * between. Immutable but for {@code open}, the number of its stall-eligible requests not yet ended,
     * shared by every version of the bucket.
     */
    private record Bucket(long firstNanos, long lastNanos, long tokens, long blocks, AtomicInteger open) {
        Bucket plus(Entry e) {
            return new Bucket(Math.min(firstNanos, e.dispatchedNanos), Math.max(lastNanos, e.dispatchedNanos),
                    tokens + e.tokens, blocks + e.blocks, open);
        }
    }

    /** What the unanswered dispatches of one rank add up to. */
    record Pending(long tokens, long blocks, boolean stalled) {
        static final Pending NONE = new Pending(0, 0, false);
    }

    private static final Bucket[] EMPTY = new Bucket[0];

    private final ConcurrentHashMap<SampleKey, Bucket[]> buckets = new ConcurrentHashMap<>();
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
        Bucket[] held = buckets.get(key);
        if (held == null) {
            return Pending.NONE;
        }
        long tokens = 0;
        long blocks = 0;
        boolean stalled = false;
        for (Bucket b : held) {
            if (!counts(b, lastSampleNanos, now)) {
                continue;
            }
            tokens += b.tokens();
            blocks += b.blocks();
            if (!stalled && now - b.firstNanos() >= STALL_AFTER_NANOS && b.open().get() > 0) {
                stalled = true;
            }
        }
        return tokens == 0 && blocks == 0 && !stalled ? Pending.NONE : new Pending(tokens, blocks, stalled);
    }

    void add(SampleKey key, Entry entry, long lastSampleNanos, long now) {
        buckets.compute(key, (k, held) -> {
            Bucket[] live = held == null ? EMPTY : retained(held, lastSampleNanos, now);
            Bucket last = live.length == 0 ? null : live[live.length - 1];
            boolean sampleSinceOpened = last != null && lastSampleNanos != NO_SAMPLE
                    && lastSampleNanos - last.firstNanos() > 0;
            Bucket[] next;
            AtomicInteger open;
            if (last != null && !sampleSinceOpened && entry.dispatchedNanos - last.firstNanos() < BUCKET_SPAN_NANOS) {
                open = last.open();
                next = live.clone();
                next[next.length - 1] = last.plus(entry);
            } else {
                open = new AtomicInteger();
                int keep = Math.min(live.length, MAX_BUCKETS_PER_KEY - 1);
                next = Arrays.copyOfRange(live, live.length - keep, live.length + 1);
                next[keep] = new Bucket(entry.dispatchedNanos, entry.dispatchedNanos, entry.tokens, entry.blocks,
                        open);
            }
            // An entry is added before its owner can end it (the picker records the dispatch before it returns
            // the selection), so end() always finds the counter it must decrement.
            if (entry.countsTowardStall()) {
                open.incrementAndGet();
                entry.openInBucket = open;
            }
            return next;
        });
        maybeSweep(now);
    }

    int keys() {
        return buckets.size();
    }

    /** Test access: buckets held for {@code key}. */
    int buckets(SampleKey key) {
        Bucket[] held = buckets.get(key);
        return held == null ? 0 : held.length;
    }

    private static boolean counts(Bucket b, long lastSampleNanos, long now) {
        // A sample received after the bucket's last dispatch already reflects all of it (no sample came
        // between its first and last dispatch, by construction).
        boolean answered = lastSampleNanos != NO_SAMPLE && lastSampleNanos - b.lastNanos() > 0;
        return !answered && now - b.lastNanos() < MAX_AGE_NANOS;
    }

    private static Bucket[] retained(Bucket[] held, long lastSampleNanos, long now) {
        int n = 0;
        for (Bucket b : held) {
            if (counts(b, lastSampleNanos, now)) {
                n++;
            }
        }
        if (n == held.length) {
            return held;
        }
        Bucket[] out = new Bucket[n];
        int i = 0;
        for (Bucket b : held) {
            if (counts(b, lastSampleNanos, now)) {
                out[i++] = b;
            }
        }
        return out;
    }

    private void maybeSweep(long now) {
        long last = lastSweep.get();
        if (now - last < SWEEP_INTERVAL_NANOS || !lastSweep.compareAndSet(last, now)) {
            return;
        }
        // Only age is known here (not the latest sample); answered buckets go on the key's next add.
        buckets.replaceAll((k, held) -> retained(held, NO_SAMPLE, now));
        buckets.values().removeIf(held -> held.length == 0);
    }
}
