package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The requests the router pinned to each (worker, dp_rank) since that rank's last sample (the "unanswered
 * dispatches" and "stalled worker" rules of {@code docs/request-path.md}), one {@link RankLedger} per rank.
 *
 * <p>A dispatch counts while no sample from its rank was received after it, and for at most
 * {@link #MAX_AGE_NANOS}. Dispatches are kept in time buckets, not one by one: at thousands of requests per
 * second a rank collects hundreds of dispatches between two samples, and every pick reads every candidate's
 * backlog. A bucket holds the dispatches to one rank within {@link #BUCKET_SPAN_NANOS} between which no
 * sample was received, so a later sample answers all of a bucket or none of it.
 *
 * <p>Bucketing trades exactness at the edges for that: a bucket's age is its newest dispatch's (a dispatch
 * counts at most one span longer than 30 s), and a bucket is stall-eligible from its oldest dispatch (a stall
 * can be seen at most one span before 5 s). Each rank keeps its buckets in a fixed ring of reusable slots
 * ({@link RankLedger}): a rank that takes dispatches for seconds without publishing a sample gets wider
 * buckets rather than more of them, and recording a dispatch allocates nothing.
 *
 * <p><b>Off the request path.</b> The candidate index takes each rank's ledger once, when it is built for a
 * registry generation, so a pick reads and writes rank ledgers without any map lookup. {@link #sweep} runs
 * on the picker's upkeep task ({@link LoadBasedPicking}): it trims aged buckets everywhere and forgets the
 * ranks that left the fleet once nothing of theirs counts, so departed workers hold no memory past 30 s.
 */
final class DispatchLedger {
    /** How long an unanswered dispatch counts at most. */
    static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** A request unanswered this long marks its rank as possibly stalled. */
    static final long STALL_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Only a request of this many blocks or more can mark a stall. */
    static final long STALL_MIN_BLOCKS = 2;
    /** Dispatches to one rank this close together (and with no sample between them) share a bucket. */
    static final long BUCKET_SPAN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * "The rank holds no sample". A real receipt time equal to it would be read as no sample, which only
     * lets its dispatches count until they age out: harmless, and one nanosecond in 2^64.
     */
    static final long NO_SAMPLE = Long.MIN_VALUE;

    private final ConcurrentHashMap<SampleKey, RankLedger> ranks = new ConcurrentHashMap<>();
    /** The ranks of the newest candidate index: their ledgers stay even while empty. */
    private volatile Set<SampleKey> indexed = Set.of();

    /** The rank's ledger, created on first use; called while building a candidate index, not per pick. */
    RankLedger rank(SampleKey key) {
        return ranks.computeIfAbsent(key, k -> new RankLedger());
    }

    /** The ranks a newly built candidate index holds; the others may be forgotten once empty. */
    void indexed(Set<SampleKey> keys) {
        this.indexed = Objects.requireNonNull(keys, "keys");
    }

    /**
     * Trims aged buckets of every rank and removes the empty ledgers of ranks outside the newest index. A pick
     * still running on an older index may record into a ledger removed here: that rank has left the fleet, so
     * nothing reads it again.
     */
    void sweep(long now) {
        Set<SampleKey> keep = indexed;
        for (var entry : ranks.entrySet()) {
            if (entry.getValue().trim(now) && !keep.contains(entry.getKey())) {
                ranks.remove(entry.getKey(), entry.getValue());
            }
        }
    }

    /** Ranks with unanswered dispatches held (aged buckets count until a dispatch or a sweep trims them). */
    int keys() {
        int n = 0;
        for (RankLedger r : ranks.values()) {
            if (!r.isEmpty()) {
                n++;
            }
        }
        return n;
    }

    /** Rank ledgers that hold a ring (ranks dispatched to at least once). */
    int rings() {
        int n = 0;
        for (RankLedger r : ranks.values()) {
            if (r.hasRing()) {
                n++;
            }
        }
        return n;
    }

    /** Rank ledgers held, empty or not. */
    int ledgers() {
        return ranks.size();
    }
}
