package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The router's own view of what each (worker, dp_rank) is working on: every request it dispatched, from the
 * dispatch until it stops counting, as upstream's {@code ActiveSequences} tracks it (ai-dynamo/dynamo
 * {@code lib/kv-router/src/sequence.rs}):
 * <ul>
 *   <li>the request's uncached prompt tokens (prompt tokens minus the blocks the rank already held) count on the
 *       rank that prefills it until its first response bytes come back through the shim;</li>
 *   <li>its prompt blocks count on the decode rank until the response ends (completed, the client went away, a
 *       retry or fallback moved it, failed), on the prefill rank of a disaggregated pair until the first token;
 *       blocks with hashes that concurrent requests on one rank share count once there;</li>
 *   <li>a sequence older than {@link #MAX_LIFETIME} (upstream's stale-request expiry) or whose worker left the
 *       fleet stops counting and is counted in {@code continuum_dynamo_active_sequence_expirations_total}.</li>
 * </ul>
 *
 * <p><b>Hot path.</b> A pick takes a pooled {@link Sequence}, adds its raw counts to its ranks' counters with
 * atomic adds and appends it to a bounded lock-free queue; a first token or an end is one compare-and-set on
 * the sequence's state word, atomic subtractions and one more append. Nothing allocates at steady state and
 * nothing waits. Deduplicating shared blocks, assigning ids, expiry, departures and the {@link
 * SequenceListener}s run in the drainer ({@link #drain}), one thread at a time: the picker upkeep every
 * {@link LoadBasedPicking#DRAIN_INTERVAL}, or a picking thread that finds {@link #HELP_DRAIN_AT} entries
 * queued. A hashed sequence's blocks count one per block until the drainer admits them (an upper bound, never
 * less than the truth), less the leading blocks it shares with a prompt this router is prefilling on that rank
 * ({@link PrefillingPrefixes}), which that prompt already counts: a burst sharing a prefix, picked faster than the
 * drainer runs, must not count the prefix once per request.
 *
 * <p><b>Bounds.</b> At most {@link #MAX_SEQUENCES} sequences are tracked at once across all ranks (a dispatch
 * beyond that is not tracked and is counted); each is a pooled object of about 112 bytes, and the queue, the
 * pool and the dispatch order take about 4.3 MiB of arrays once the first dispatch allocates them. Tracked
 * sequences reference at most {@link #MAX_SHARED_BLOCKS} block hashes in all (8 MiB; a sequence whose hashes do
 * not fit counts its blocks one per block), so the reference counts hold at most as many entries (12 bytes a
 * slot, at most 4 slots an entry after a table doubled). A rank costs about 64 bytes: the two counters a pick reads
 * (prefill tokens, blocks), kept in its {@link RankLedger} beside the ledger's own fields, and its
 * {@link RankSequences} (the open count, the prefilling prompts, the reference counts).
 */
public final class ActiveSequences {
    /** Sequences tracked at once, across every rank. */
    public static final int MAX_SEQUENCES = 65_536;
    /** Upstream's {@code EXPIRY_DURATION}: a request still counting after this is expired. */
    public static final Duration MAX_LIFETIME = Duration.ofMinutes(5);
    /**
     * Block hashes held by tracked sequences at once, across every rank (a sequence keeps its prompt's hashes
     * until it ends): 8 MiB of hashes, and as many reference counts at most. A sequence whose hashes do not fit
     * counts its blocks one per block.
     */
    static final int MAX_SHARED_BLOCKS = 1 << 20;
    /** A picking thread that finds this many queued entries drains them itself. */
    static final int HELP_DRAIN_AT = 64;
    /** Each sequence has at most three entries queued (dispatch, first token, end); the queue never fills. */
    static final int QUEUE_CAPACITY = 4 * MAX_SEQUENCES;
    /** Tokens one sequence may count (the estimate of a bounded body is far below). */
    static final long MAX_TOKENS = 1L << 40;

    private static final VarHandle DRAINING;
    private static final VarHandle RINGS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DRAINING = lookup.findVarHandle(ActiveSequences.class, "draining", int.class);
            RINGS = lookup.findVarHandle(ActiveSequences.class, "rings", Rings.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The queue, the pool and the drainer's dispatch-ordered list, allocated by the first dispatch. */
    private static final class Rings {
        final BoundedRing<Sequence> queue = new BoundedRing<>(QUEUE_CAPACITY);
        final BoundedRing<Sequence> pool = new BoundedRing<>(MAX_SEQUENCES);
        final SequenceOrder order = new SequenceOrder();
    }

    private final ConcurrentHashMap<SampleKey, RankSequences> ranks = new ConcurrentHashMap<>();
    private final SequenceListeners listeners = new SequenceListeners();
    private final long maxLifetimeNanos;
    private final AtomicInteger created = new AtomicInteger();
    private final AtomicLong untracked = new AtomicLong();
    /** Hashes referenced by tracked sequences (reserved by a pick, released by the drainer). */
    private final AtomicLong heldHashes = new AtomicLong();
    private final AtomicLong expiredLifetime = new AtomicLong();
    private final AtomicLong expiredWorkerLeft = new AtomicLong();
    private volatile Set<SampleKey> indexed = Set.of();
    @SuppressWarnings("FieldMayBeFinal") // written through DRAINING
    private volatile int draining;
    @SuppressWarnings("FieldMayBeFinal") // written through RINGS
    private volatile @Nullable Rings rings;

    // Drainer-owned.
    private long nextId = 1;
    /** Admitted and not yet released (drainer-written, read by the gauge). */
    private volatile long live;

    private final LongSupplier ticker;

    /** @param ticker the picker's monotonic nanosecond clock (its dispatches and ends are stamped with it) */
    ActiveSequences(LongSupplier ticker) {
        this(ticker, MAX_LIFETIME);
    }

    ActiveSequences(LongSupplier ticker, Duration maxLifetime) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.maxLifetimeNanos = maxLifetime.toNanos();
    }

    long now() {
        return ticker.getAsLong();
    }

    // ------------------------------------------------------------------ read API

    /** Active uncached prompt tokens of this router's dispatches to {@code rank} (0 when none). */
    public long activePrefillTokens(SampleKey rank) {
        RankSequences r = ranks.get(rank);
        return r == null ? 0 : r.prefillTokens();
    }

    /** Active blocks of this router's dispatches to {@code rank}, shared prefixes counted once (0 when none). */
    public long activeBlocks(SampleKey rank) {
        RankSequences r = ranks.get(rank);
        return r == null ? 0 : r.blocks();
    }

    /** Active sequences on {@code rank}. */
    public int activeSequences(SampleKey rank) {
        RankSequences r = ranks.get(rank);
        return r == null ? 0 : r.sequences();
    }

    /** Sums over every rank (a sequence of a disaggregated pair counts on both of its ranks). */
    public Totals totals() {
        long seqs = 0;
        long tokens = 0;
        long blocks = 0;
        for (RankSequences r : ranks.values()) {
            seqs += r.sequences();
            tokens = LoadCosts.add(tokens, r.prefillTokens());
            blocks = LoadCosts.add(blocks, r.blocks());
        }
        return new Totals(seqs, tokens, blocks);
    }

    /** What {@link #totals} sums. */
    public record Totals(long sequences, long prefillTokens, long blocks) {
    }

    /**
     * Where peer replicas add their share of {@code rank}, or null while the rank is in no candidate index (the
     * caller retries later); the object changes when the rank's ledger is replaced (see {@link PeerCounters}).
     */
    public @Nullable PeerCounters peerCounters(SampleKey rank) {
        RankSequences r = ranks.get(rank);
        return r == null ? null : r.peers;
    }

    /** Registers {@code listener} until the returned handle is closed. */
    public AutoCloseable listen(SequenceListener listener) {
        return listeners.add(listener);
    }

    long liveSequences() {
        return live;
    }

    long untracked() {
        return untracked.get();
    }

    long expired(SequenceEnd reason) {
        return reason == SequenceEnd.WORKER_LEFT ? expiredWorkerLeft.get() : expiredLifetime.get();
    }

    // ------------------------------------------------------------------ ranks (off the request path)

    /**
     * The rank's sequences over its ledger's counters, created on first use (and again when the rank's ledger was
     * replaced, after the ledger forgot the rank); called while building a candidate index, not per pick.
     */
    RankSequences rank(SampleKey key, RankLedger ledger) {
        return ranks.compute(key,
                (k, old) -> old != null && old.counters == ledger ? old : new RankSequences(k, ledger));
    }

    /** The ranks of the newest candidate index; sequences of other ranks end at the next maintenance. */
    void indexed(Set<SampleKey> keys) {
        this.indexed = Objects.requireNonNull(keys, "keys");
    }

    int rankCount() {
        return ranks.size();
    }

    // ------------------------------------------------------------------ hot path

    /** A pooled sequence to fill, or null when {@link #MAX_SEQUENCES} are tracked (then the dispatch is not). */
    @Nullable Sequence take() {
        Rings r = rings();
        Sequence s = r.pool.poll();
        if (s != null) {
            return s;
        }
        if (created.get() < MAX_SEQUENCES && created.incrementAndGet() <= MAX_SEQUENCES) {
            return new Sequence(this);
        }
        untracked.incrementAndGet();
        return null;
    }

    /**
     * Starts {@code s} (taken and filled by the caller) at {@code now}: its counts go onto its ranks and it is
     * queued for the drainer. The handle's stamp is the returned state's.
     */
    int start(Sequence s, long now) {
        RankSequences decode = Objects.requireNonNull(s.decode, "decode");
        RankSequences prefill = s.prefill;
        s.prefillTokens = Math.min(Math.max(0, s.prefillTokens), MAX_TOKENS);
        s.dispatchedAt = now;
        if (s.decodeHashes != null && !reserve(s.decodeHashes.blocks())) {
            s.decodeHashes = null;
        }
        if (s.prefillHashes != null && (prefill == null || !reserve(s.prefillHashes.blocks()))) {
            s.prefillHashes = null;
        }
        s.decodeHeld = held(decode, s.decodeHashes, s.decodeBlocks);
        s.prefillHeld = prefill == null ? 0 : held(prefill, s.prefillHashes, s.prefillBlocks);
        long state = s.state() + Sequence.ENTRY;
        s.publish(state);
        decode.addRaw(s.decodeBlocks - s.decodeHeld);
        decode.addOpen(1);
        BlockHashes prefillingHashes = prefill == null ? s.decodeHashes : s.prefillHashes;
        if (prefillingHashes != null) {
            (prefill == null ? decode : prefill).prefilling.started(prefillingHashes, s.prefillTokens);
        }
        if (prefill == null) {
            decode.addTokens(s.prefillTokens);
        } else {
            prefill.addTokens(s.prefillTokens);
            prefill.addRaw(s.prefillBlocks - s.prefillHeld);
            prefill.addOpen(1);
        }
        enqueue(s, now);
        return Sequence.stamp(state);
    }

    /**
     * Of a hashed sequence's blocks, those a prefill in flight on {@code rank} already counts (the burst sharing a
     * prefix): until the drainer admits the sequence and counts shared blocks once, they are not added again.
     */
    private static long held(RankSequences rank, @Nullable BlockHashes hashes, long blocks) {
        return hashes == null ? 0 : Math.min(Math.min(blocks, hashes.blocks()), rank.prefilling.sharedBlocks(hashes));
    }

    private boolean reserve(int blocks) {
        if (heldHashes.addAndGet(blocks) <= MAX_SHARED_BLOCKS) {
            return true;
        }
        heldHashes.addAndGet(-blocks);
        return false;
    }

    /** Test access: hashes referenced by tracked sequences. */
    long heldHashes() {
        return heldHashes.get();
    }

    /** The first response bytes of sequence {@code s} at use {@code stamp}: its prefill tokens stop counting. */
    void firstToken(Sequence s, int stamp, long now) {
        while (true) {
            long st = s.state();
            if (Sequence.stamp(st) != stamp || (st & (Sequence.FIRST | Sequence.ENDED)) != 0) {
                return;
            }
            RankSequences decode = s.decode;
            RankSequences prefill = s.prefill;
            long tokens = s.prefillTokens;
            long prefillBlocks = s.prefillBlocks;
            boolean prefillHashed = s.prefillHashes != null;
            BlockHashes prefillingHashes = prefill != null ? s.prefillHashes : s.decodeHashes;
            boolean entry = (st & Sequence.ENTRIES) != Sequence.ENTRIES;
            if (s.cas(st, (st | Sequence.FIRST) + (entry ? Sequence.ENTRY : 0))) {
                RankSequences prefilling = prefill != null ? prefill : decode;
                if (prefilling != null) {
                    prefilling.addTokens(-tokens);
                    if (prefillingHashes != null) {
                        prefilling.prefilling.ended(prefillingHashes);
                    }
                }
                if (prefill != null) {
                    if (!prefillHashed) {
                        prefill.addRaw(-prefillBlocks);
                    }
                    prefill.addOpen(-1);
                }
                if (entry) {
                    enqueue(s, now);
                }
                return;
            }
        }
    }

    /**
     * The end of sequence {@code s} at use {@code stamp}, for {@code reason}: nothing of it counts any longer.
     * False when that use had already ended (or the object moved on to another use).
     */
    boolean end(Sequence s, int stamp, SequenceEnd reason, long now) {
        while (true) {
            long st = s.state();
            if (Sequence.stamp(st) != stamp || (st & Sequence.ENDED) != 0) {
                return false;
            }
            // Read before the compare-and-set: afterwards the drainer may recycle the object.
            RankSequences decode = s.decode;
            RankSequences prefill = s.prefill;
            long tokens = s.prefillTokens;
            long decodeBlocks = s.decodeHashes == null ? s.decodeBlocks : 0;
            long prefillBlocks = s.prefillHashes == null ? s.prefillBlocks : 0;
            BlockHashes prefillingHashes = prefill != null ? s.prefillHashes : s.decodeHashes;
            RankLedger decodeLedger = s.decodeLedger;
            long decodeTicket = s.decodeTicket;
            RankLedger prefillLedger = s.prefillLedger;
            long prefillTicket = s.prefillTicket;
            boolean entry = (st & Sequence.ENTRIES) != Sequence.ENTRIES;
            if (s.cas(st, (st | Sequence.ENDED | Sequence.reasonBits(reason)) + (entry ? Sequence.ENTRY : 0))) {
                if ((st & Sequence.FIRST) == 0) {
                    RankSequences prefilling = prefill != null ? prefill : decode;
                    if (prefilling != null) {
                        prefilling.addTokens(-tokens);
                        if (prefillingHashes != null) {
                            prefilling.prefilling.ended(prefillingHashes);
                        }
                    }
                    if (prefill != null) {
                        prefill.addRaw(-prefillBlocks);
                        prefill.addOpen(-1);
                    }
                }
                if (decode != null) {
                    decode.addRaw(-decodeBlocks);
                    decode.addOpen(-1);
                }
                if (decodeLedger != null && decodeTicket != RankLedger.NO_COUNTER) {
                    decodeLedger.end(decodeTicket);
                }
                if (prefillLedger != null && prefillTicket != RankLedger.NO_COUNTER) {
                    prefillLedger.end(prefillTicket);
                }
                if (entry) {
                    enqueue(s, now);
                }
                return true;
            }
        }
    }

    private void enqueue(Sequence s, long now) {
        Rings r = rings();
        if (!r.queue.offer(s)) {
            // Not expected (the queue holds three entries per tracked sequence): the drainer catches the sequence
            // up from another entry or when it reaches the head of the dispatch order.
            dropEntry(s);
            return;
        }
        if (r.queue.size() >= HELP_DRAIN_AT) {
            drain(now, false);
        }
    }

    private static void dropEntry(Sequence s) {
        while (true) {
            long st = s.state();
            if ((st & Sequence.ENTRIES) == 0 || s.cas(st, st - Sequence.ENTRY)) {
                return;
            }
        }
    }

    private Rings rings() {
        Rings r = rings;
        if (r != null) {
            return r;
        }
        Rings fresh = new Rings();
        Rings won = (Rings) RINGS.compareAndExchange(this, (Rings) null, fresh);
        return won == null ? fresh : won;
    }

    // ------------------------------------------------------------------ the drainer

    /**
     * Drains the queue (admitting, deduplicating and telling listeners), expires sequences past their lifetime
     * and, with {@code maintenance}, ends the sequences of ranks that left the newest candidate index and forgets
     * those ranks once nothing of theirs counts. Returns false when another thread is draining (it does the work).
     */
    boolean drain(long now, boolean maintenance) {
        if (!DRAINING.compareAndSet(this, 0, 1)) {
            return false;
        }
        try {
            Rings r = rings;
            if (r != null) {
                for (int i = 0, n = r.queue.capacity(); i < n; i++) {
                    Sequence s = r.queue.poll();
                    if (s == null) {
                        break;
                    }
                    catchUp(r, s);
                    entryDone(r, s);
                }
                expireOld(r, now);
            }
            if (maintenance) {
                departures(r, now);
            }
            return true;
        } finally {
            DRAINING.setRelease(this, 0);
        }
    }

    /** Brings the drainer's side of {@code s} up to its state word. */
    private void catchUp(Rings r, Sequence s) {
        long st = s.state();
        if (!s.admitted && !s.released) {
            admit(r, s);
        }
        if ((st & Sequence.FIRST) != 0 && !s.firstTold) {
            s.firstTold = true;
            releasePrefill(s);
            listeners.firstToken(s.id);
        }
        if ((st & Sequence.ENDED) != 0 && !s.released) {
            s.released = true;
            if (s.admitted) {
                live = live - 1;
            }
            releasePrefill(s);
            RankSequences decode = s.decode;
            BlockHashes hashes = s.decodeHashes;
            if (decode != null && hashes != null) {
                heldHashes.addAndGet(-hashes.blocks());
                if (s.decodeShared) {
                    release(decode, hashes, s.decodeBlocks);
                } else {
                    decode.addRaw(-s.decodeBlocks);
                }
            }
            SequenceEnd why = Sequence.reason(st);
            listeners.ended(s.id, why);
        }
    }

    private void admit(Rings r, Sequence s) {
        s.admitted = true;
        s.id = nextId++;
        live = live + 1;
        RankSequences decode = Objects.requireNonNull(s.decode, "decode");
        RankSequences prefill = s.prefill;
        s.decodeShared = share(decode, s.decodeHashes, s.decodeBlocks, s.decodeHeld);
        s.prefillShared = prefill != null && share(prefill, s.prefillHashes, s.prefillBlocks, s.prefillHeld);
        r.order.add(s);
        if (!listeners.isEmpty()) {
            listeners.dispatched(new DispatchedSequence(s.id, decode.key, prefill == null ? null : prefill.key,
                    s.prefillTokens, s.decodeBlocks, s.decodeHashes, s.prefillHashes));
        }
    }

    /**
     * Moves a hashed sequence's blocks on {@code rank} from the raw count to the shared one (hashes held by
     * another sequence there add nothing); false when it has no hashes (its blocks then stay raw).
     */
    private boolean share(RankSequences rank, @Nullable BlockHashes hashes, long blocks, long held) {
        if (hashes == null) {
            return false;
        }
        long added = 0;
        for (long h : hashes.hashes()) {
            if (rank.refs.retain(h)) {
                added++;
            }
        }
        // A trailing partial block has no hash: it stays raw (its own), the rest moves to the shared count.
        rank.addShared(added);
        rank.addRaw(-(Math.min(blocks, hashes.blocks()) - held));
        return true;
    }

    private void release(RankSequences rank, BlockHashes hashes, long blocks) {
        long freed = 0;
        for (long h : hashes.hashes()) {
            if (rank.refs.release(h)) {
                freed++;
            }
        }
        rank.addShared(-freed);
        // What share() left raw: the trailing partial block.
        rank.addRaw(-(blocks - Math.min(blocks, hashes.blocks())));
    }

    private void releasePrefill(Sequence s) {
        RankSequences prefill = s.prefill;
        BlockHashes hashes = s.prefillHashes;
        if (prefill == null || hashes == null || s.prefillReleased) {
            return;
        }
        s.prefillReleased = true;
        heldHashes.addAndGet(-hashes.blocks());
        if (s.prefillShared) {
            release(prefill, hashes, s.prefillBlocks);
        } else {
            prefill.addRaw(-s.prefillBlocks);
        }
    }

    /** One queue entry of {@code s} was handled: recycle it when it ended, was released and nothing names it. */
    private static void entryDone(Rings r, Sequence s) {
        while (true) {
            long st = s.state();
            long next = (st & Sequence.ENTRIES) == 0 ? st : st - Sequence.ENTRY;
            if (s.cas(st, next)) {
                recycleIfDone(r, s, next);
                return;
            }
        }
    }

    private static void recycleIfDone(Rings r, Sequence s, long st) {
        if ((st & Sequence.ENDED) != 0 && (st & Sequence.ENTRIES) == 0 && s.released) {
            s.recycle();
            r.pool.offer(s);
        }
    }

    /** Expires the sequences at the head of the dispatch order that outlived their lifetime. */
    private void expireOld(Rings r, long now) {
        for (Sequence s = r.order.oldest(); s != null; s = r.order.oldest()) {
            if (now - s.dispatchedAt < maxLifetimeNanos) {
                return;
            }
            expire(r, s, SequenceEnd.EXPIRED, now);
            r.order.pop();
        }
    }

    /** Ends {@code s} in the drainer (no queue entry), releases it and counts why. */
    private void expire(Rings r, Sequence s, SequenceEnd reason, long now) {
        if (end(s, Sequence.stamp(s.state()), reason, now)) {
            (reason == SequenceEnd.WORKER_LEFT ? expiredWorkerLeft : expiredLifetime).incrementAndGet();
        }
        // Catch up now rather than when the entry end() queued is drained; recycle if no entry names it.
        catchUp(r, s);
        recycleIfDone(r, s, s.state());
    }

    /** Ends the live sequences of ranks outside the newest index and forgets such ranks once empty. */
    private void departures(@Nullable Rings r, long now) {
        Set<SampleKey> keep = indexed;
        boolean any = false;
        for (RankSequences rank : ranks.values()) {
            boolean gone = !keep.contains(rank.key);
            rank.departed = gone;
            any |= gone && rank.sequences() > 0;
        }
        if (any && r != null) {
            r.order.forEachLive(s -> {
                if (departed(s)) {
                    expire(r, s, SequenceEnd.WORKER_LEFT, now);
                }
            });
        }
        for (RankSequences rank : ranks.values()) {
            if (rank.departed && rank.sequences() == 0 && rank.refs.size() == 0) {
                ranks.remove(rank.key, rank);
            }
        }
    }

    private static boolean departed(Sequence s) {
        RankSequences d = s.decode;
        RankSequences p = s.prefill;
        return (d != null && d.departed) || (p != null && p.departed);
    }
}
