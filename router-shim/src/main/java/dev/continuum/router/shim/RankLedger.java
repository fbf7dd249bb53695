package dev.continuum.router.shim;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The unanswered dispatches of one (worker, dp_rank), as time buckets (see {@link DispatchLedger} for the
 * rules). The bucket array is immutable and replaced whole by compare-and-set: readers take one volatile
 * read, writers never lock, and two picks that land on the same rank at once retry instead of queueing on
 * a map bin's monitor.
 */
final class RankLedger {
    private static final Bucket[] EMPTY = new Bucket[0];
    private static final VarHandle BUCKETS;

    static {
        try {
            BUCKETS = MethodHandles.lookup().findVarHandle(RankLedger.class, "buckets", Bucket[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Dispatches to this rank between {@code firstNanos} and {@code lastNanos} with no sample received in
     * between. Immutable but for {@code open}, the number of its stall-eligible requests not yet ended,
     * shared by every version of the bucket.
     */
    private record Bucket(long firstNanos, long lastNanos, long tokens, long blocks, AtomicInteger open) {
        Bucket plus(long addTokens, long addBlocks, long at) {
            return new Bucket(Math.min(firstNanos, at), Math.max(lastNanos, at), LoadCosts.add(tokens, addTokens),
                    LoadCosts.add(blocks, addBlocks), open);
        }
    }

    @SuppressWarnings("FieldMayBeFinal") // written through BUCKETS
    private volatile Bucket[] buckets = EMPTY;

    /**
     * Records one dispatch at {@code now} and returns the counter its owner decrements when the request ends,
     * or null when the dispatch cannot count toward a stall.
     *
     * @param lastSampleNanos receipt time of the rank's latest sample, or {@link DispatchLedger#NO_SAMPLE}
     */
    @Nullable AtomicInteger add(long tokens, long blocks, boolean stallEligible, long lastSampleNanos, long now) {
        boolean countsTowardStall = stallEligible && blocks >= DispatchLedger.STALL_MIN_BLOCKS;
        while (true) {
            Bucket[] held = buckets;
            Bucket[] live = retained(held, lastSampleNanos, now);
            Bucket last = live.length == 0 ? null : live[live.length - 1];
            boolean sampleSinceOpened = last != null && lastSampleNanos != DispatchLedger.NO_SAMPLE
                    && lastSampleNanos - last.firstNanos() > 0;
            Bucket[] next;
            AtomicInteger open;
            if (last != null && !sampleSinceOpened && now - last.firstNanos() < DispatchLedger.BUCKET_SPAN_NANOS) {
                open = last.open();
                next = live.clone();
                next[next.length - 1] = last.plus(tokens, blocks, now);
            } else {
                open = new AtomicInteger();
                int keep = Math.min(live.length, DispatchLedger.MAX_BUCKETS_PER_KEY - 1);
                next = Arrays.copyOfRange(live, live.length - keep, live.length + 1);
                next[keep] = new Bucket(now, now, tokens, blocks, open);
            }
            if (BUCKETS.compareAndSet(this, held, next)) {
                // Counted after the bucket is visible: a reader may miss this request's stall for an instant,
                // never see a stall that is not there. The owner cannot end it before this returns.
                if (!countsTowardStall) {
                    return null;
                }
                open.incrementAndGet();
                return open;
            }
        }
    }

    /** Unanswered prompt tokens (the prefill backlog the ledger adds), saturating. */
    long pendingTokens(long lastSampleNanos, long now) {
        long sum = 0;
        for (Bucket b : buckets) {
            if (counts(b, lastSampleNanos, now)) {
                sum = LoadCosts.add(sum, b.tokens());
            }
        }
        return sum;
    }

    /** Unanswered KV blocks (the decode backlog the ledger adds), saturating. */
    long pendingBlocks(long lastSampleNanos, long now) {
        long sum = 0;
        for (Bucket b : buckets) {
            if (counts(b, lastSampleNanos, now)) {
                sum = LoadCosts.add(sum, b.blocks());
            }
        }
        return sum;
    }

    /** Whether a counted, open, stall-eligible dispatch has gone unanswered for five seconds. */
    boolean stalled(long lastSampleNanos, long now) {
        for (Bucket b : buckets) {
            if (counts(b, lastSampleNanos, now) && now - b.firstNanos() >= DispatchLedger.STALL_AFTER_NANOS
                    && b.open().get() > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Drops the buckets that aged out (only age is known here, not the latest sample: answered buckets go on
     * the rank's next dispatch) and returns whether none is left.
     */
    boolean trim(long now) {
        while (true) {
            Bucket[] held = buckets;
            Bucket[] live = retained(held, DispatchLedger.NO_SAMPLE, now);
            if (live == held || BUCKETS.compareAndSet(this, held, live)) {
                return live.length == 0;
            }
        }
    }

    boolean isEmpty() {
        return buckets.length == 0;
    }

    int bucketCount() {
        return buckets.length;
    }

    private static boolean counts(Bucket b, long lastSampleNanos, long now) {
        // A sample received after the bucket's last dispatch already reflects all of it (no sample came
        // between its first and last dispatch, by construction).
        boolean answered = lastSampleNanos != DispatchLedger.NO_SAMPLE && lastSampleNanos - b.lastNanos() > 0;
        return !answered && now - b.lastNanos() < DispatchLedger.MAX_AGE_NANOS;
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
        if (n == 0) {
            return EMPTY;
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
}
