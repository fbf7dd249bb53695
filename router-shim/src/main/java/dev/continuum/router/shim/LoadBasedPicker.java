package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.RankSlot;
import dev.continuum.router.load.SampleKey;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The load-only picker (mirrors Dynamo's load-only cost formulas, computed by {@link LoadCosts}):
 * <ul>
 *   <li>prefill cost = (active_prefill_tokens + unanswered prompt tokens) / max_num_batched_tokens</li>
 *   <li>decode cost = (active_decode_blocks, else kv_used_blocks, + unanswered blocks
 *       + ceil(estimated_prompt_tokens / block_size)) / total_kv_blocks</li>
 * </ul>
 * Candidates come from the {@link CandidateIndex} of the snapshot's fleet view (one per dp_rank). Decode is
 * chosen first across every offered namespace, then prefill within the decode winner's namespace, so a pair
 * never crosses graphs.
 *
 * <p>Per phase: when at least one candidate has a fresh sample carrying the phase's field, the lowest defined
 * cost wins ({@code load}); quiet candidates (no sample, or a last sample without backlog) compete with zero
 * backlog; silent-under-load candidates and those missing a capacity have no cost and are not chosen;
 * stalled candidates are chosen only when no other candidate has a cost; equal costs rotate on the phase's
 * cursor. When none has such a sample, the phase's cursor rotates over all candidates
 * ({@code round_robin_stale}, or {@code round_robin_no_signal} when the source has no load signal), and
 * stalls are ignored since nothing could have answered.
 *
 * <p><b>Hot path.</b> No locks, no lookups and no per-candidate allocation: a pick reads the index's arrays,
 * each candidate's load-store slot (a few fields, no key hashed), its rank ledger and its active-sequence
 * counters; costs go into a per-thread scratch array, the cheapest found in the same pass (a decision record's
 * terms are copied only while one is wanted); the two pinned ranks' ledgers and counters are updated in place. It allocates the selection (32 bytes) and the 24-byte handle of its pooled active sequence (the ledger's
 * 32-byte record instead when the sequence bound is reached): at most 64 bytes per pick, at any fleet size. The
 * index is
 * rebuilt when the fleet view changes: by {@link #prepare} on the upkeep task ({@link LoadBasedPicking}), or
 * by the first pick that sees the new view when nothing prepared it; and by the upkeep when the store detached
 * a slot the index holds (until then that rank is read by key, {@link CandidateRanks#read}).
 */
final class LoadBasedPicker implements DynamoWorkerPicker {
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private final LoadStore store;
    private final LongSupplier ticker;
    private final SelectionMetrics metrics;
    private final DispatchLedger ledger = new DispatchLedger();
    private final ActiveSequences sequences;
    private final AtomicLong prefillCursor = new AtomicLong();
    private final AtomicLong decodeCursor = new AtomicLong();
    private volatile CandidateIndex index = CandidateIndex.empty();

    LoadBasedPicker(LoadStore store, LongSupplier ticker, SelectionMetrics metrics) {
        this.store = Objects.requireNonNull(store, "store");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.sequences = new ActiveSequences(ticker);
    }

    /** Per-thread working space of one decision; never shared, grown to the largest candidate count seen. */
    static final class Scratch {
        double[] costs = new double[64];
        boolean[] stalled = new boolean[64];
        /** Decision-record terms, written only while a record is wanted ({@link DecisionStaging#active}), five a
         *  candidate side by side ({@link #BACKLOG} and on): its phase field (-1 absent), unanswered tokens or blocks
         *  ({@link #UNREAD} where the cost did not need the ledger: the capture reads it for the kept candidates only),
         *  this router's active sequences for the phase (-1 where the rank had no cost), the backlog the cost used
         *  ({@link LoadCosts#backlog} of the three), and the receipt time of the rank's sample the ledger is read
         *  against. One array, so a candidate's terms are one bounds check and neighbouring stores. */
        long[] terms = new long[64 * TERMS];
        /** This thread's decision terms, copied after each phase while a record is wanted. */
        final DecisionStaging staging = new DecisionStaging();
        CandidateRanks[] parts = new CandidateRanks[4];
        /** One candidate's sample, copied out of its slot. */
        final RankSlot.Reading reading = new RankSlot.Reading();
        /** The chosen candidate: its part and index within it. */
        int part;
        int at;

        static final int TERMS = 5;
        static final int BACKLOG = 0;
        static final int PENDING = 1;
        static final int ACTIVE = 2;
        static final int USED = 3;
        static final int SAMPLE = 4;
        /** {@link #PENDING} of a candidate whose ledger the scoring pass did not read. */
        static final long UNREAD = Long.MIN_VALUE;

        /** Keeps candidate {@code k}'s record terms ({@code field}: {@link RankSlot#ABSENT}, -1, when it had none). */
        void terms(int k, long field, long pending, long active, long used, long lastSample) {
            long[] t = terms;
            int at = k * TERMS;
            t[at + SAMPLE] = lastSample;
            t[at + BACKLOG] = field;
            t[at + PENDING] = pending;
            t[at + ACTIVE] = active;
            t[at + USED] = used;
        }

        /** One of candidate {@code k}'s record terms ({@link #BACKLOG} .. {@link #USED}). */
        long term(int k, int which) {
            return terms[k * TERMS + which];
        }

        void parts(int n) {
            if (parts.length < n) {
                parts = new CandidateRanks[Math.max(n, parts.length * 2)];
            }
        }

        void candidates(int n) {
            if (costs.length < n) {
                int size = Math.max(n, costs.length * 2);
                costs = new double[size];
                stalled = new boolean[size];
                terms = new long[size * TERMS];
            }
        }
    }

    @Override
    public @Nullable Selection pick(DynamoSnapshot snapshot, PickRequest request) {
        CandidateIndex.ModelCandidates model = index(snapshot).model(request.model());
        if (model == null) {
            return null;
        }
        Scratch scratch = SCRATCH.get();
        CandidateIndex.Group[] groups = model.groups();
        scratch.parts(groups.length);
        Set<String> offered = request.namespaces();
        int parts = 0;
        int n = 0;
        for (CandidateIndex.Group g : groups) {
            if (g.decode().size > 0 && offered.contains(g.namespace())) {
                scratch.parts[parts++] = g.decode();
                n += g.decode().size;
            }
        }
        if (n == 0) {
            return null;
        }
        long now = ticker.getAsLong();
        boolean signal = snapshot.signals().load();
        long est = request.estimatedPromptTokens();
        SelectionReason decodeReason = session(scratch, parts, request.sessionRank(), now) ? SelectionReason.SESSION
                : choose(scratch, parts, n, true, decodeCursor, signal, est, now);
        CandidateRanks decode = scratch.parts[scratch.part];
        int d = scratch.at;

        CandidateRanks prefill = decode.pins[d].role() == WorkerRole.DECODE ? decode.prefill : null;
        int p = -1;
        SelectionReason prefillReason = SelectionReason.NO_PREFILL_POOL;
        if (prefill != null) {
            scratch.parts[0] = prefill;
            prefillReason = choose(scratch, 1, prefill.size, false, prefillCursor, signal, est, now);
            p = scratch.at;
        }
        metrics.record(decodeReason, prefillReason);
        Selection.Dispatch dispatch = record(decode, d, prefill, p, est, now);
        return new Selection(decode.pins[d], prefill == null ? null : prefill.pins[p], decodeReason, prefillReason,
                dispatch);
    }

    /**
     * Builds the candidate index of {@code snapshot}'s fleet view now unless it is current, so that the first
     * pick after a registry change does not pay for it. Called on the upkeep task.
     */
    void prepare(DynamoSnapshot snapshot) {
        index(snapshot);
    }

    CandidateIndex index(DynamoSnapshot snapshot) {
        CandidateIndex current = index;
        FleetView fleet = snapshot.fleet();
        // A snapshot older than the index's (read just before a registry swap) is served from the newer index:
        // rebuilding for it would put an O(fleet) build on the request path and undo the upkeep's.
        if (current.fleet == fleet || snapshot.generation() < current.generation) {
            return current;
        }
        return rebuild(fleet, snapshot.generation());
    }

    private CandidateIndex rebuild(FleetView fleet, long generation) {
        // Two threads may build the same view at once; both get the same rank ledgers and slots, and the last
        // write wins.
        CandidateIndex built = CandidateIndex.build(fleet, generation, store, ledger, sequences);
        index = built;
        return built;
    }

    /**
     * Rebuilds the current index when the store detached one of its slots (a rank whose key left the live set
     * while this index was current, or before the store's live set caught up with the index's registry
     * generation): picks read such a rank by key meanwhile, and the rebuild gives it its fresh slot. Called on
     * the upkeep task.
     */
    void refreshSlots() {
        CandidateIndex current = index;
        if (current.detachedSlots != store.detachedSlots() && current.holdsDetachedSlot()) {
            rebuild(current.fleet, current.generation);
        }
    }

    /**
     * Chooses among the {@code n} candidates of the first {@code parts} entries of {@code scratch.parts} and
     * leaves the winner in {@code scratch.part}/{@code scratch.at}.
     */
    SelectionReason choose(Scratch scratch, int parts, int n, boolean decode, AtomicLong cursor,
            boolean signal, long est, long now) {
        if (!signal) {
            locate(scratch, parts, Math.floorMod(cursor.getAndIncrement(), (long) n));
            return SelectionReason.ROUND_ROBIN_NO_SIGNAL;
        }
        // Ages are measured on the picker's ticker, which is the store's (the ledger compares the two as well);
        // one clock read per decision.
        long maxStaleNanos = store.maxStaleness().toNanos();
        scratch.candidates(n);
        double[] costs = scratch.costs;
        boolean[] stalled = scratch.stalled;
        boolean anyFresh = false;
        boolean anyUnstalled = false;
        // The record's terms are copied only while a record is wanted: a pick without one stores nothing more
        // than its cost and stall per candidate.
        boolean terms = scratch.staging.active;
        long lastBlockSize = -1;
        long promptBlocks = 0;
        RankSlot.Reading latest = scratch.reading;
        // The cheapest unstalled candidate is found while scoring (one pass over the candidates, not two): costs are
        // never -0.0, so plain comparisons order them as Double.compare does. Stalled candidates compete only when
        // no candidate is unstalled, the rare case a second pass handles.
        double best = Double.NaN;
        int tied = 0;
        int first = -1;
        int k = 0;
        for (int part = 0; part < parts; part++) {
            CandidateRanks ranks = scratch.parts[part];
            for (int i = 0; i < ranks.size; i++, k++) {
                ranks.read(i, store, latest);
                boolean held = latest.held();
                boolean fresh = held && now - latest.receivedNanos() <= maxStaleNanos;
                long field = !fresh ? RankSlot.ABSENT : decode ? latest.decodeBlocks() : latest.prefillTokens();
                boolean hasField = field != RankSlot.ABSENT;
                anyFresh |= hasField;
                long backlog;
                if (hasField) {
                    backlog = field;
                } else if (!fresh && (!held || !latest.reportsBacklog())) {
                    backlog = 0; // quiet: an idle worker publishes zero and falls silent
                } else {
                    costs[k] = Double.NaN; // silent under load, or a fresh sample without the phase's field
                    stalled[k] = false;
                    if (terms) {
                        scratch.terms(k, field, 0, -1, 0, DispatchLedger.NO_SAMPLE);
                    }
                    continue;
                }
                double capacity = ranks.capacity[i];
                if (Double.isNaN(capacity)) {
                    costs[k] = Double.NaN;
                    stalled[k] = false;
                    if (terms) {
                        scratch.terms(k, field, 0, -1, 0, DispatchLedger.NO_SAMPLE);
                    }
                    continue;
                }
                long lastSample = held ? latest.receivedNanos() : DispatchLedger.NO_SAMPLE;
                RankLedger rank = ranks.ledgers[i];
                boolean stall = rank.stalled(lastSample, now);
                stalled[k] = stall;
                anyUnstalled |= !stall;
                if (decode) {
                    long bs = ranks.costBlockSize[i];
                    if (bs != lastBlockSize) {
                        lastBlockSize = bs;
                        promptBlocks = LoadCosts.ceilDiv(est, bs);
                    }
                    long active = rank.activeBlocks();
                    // The ledger adds only dispatches still running (LoadCosts.backlog): a rank with nothing of ours
                    // active costs its sample alone, and its ledger is not read here (a record reads it for the
                    // candidates it keeps, DecisionCapture.loadPhase).
                    long pendingBlocks = active != 0 ? rank.pendingBlocks(lastSample, now) : Scratch.UNREAD;
                    long used = active == 0 ? LoadCosts.magnitude(backlog)
                            : LoadCosts.backlog(backlog, pendingBlocks, active);
                    costs[k] = LoadCosts.decode(used, 0, promptBlocks, capacity);
                    if (terms) {
                        scratch.terms(k, field, pendingBlocks, active, used, lastSample);
                    }
                } else {
                    long active = rank.activePrefillTokens();
                    long pendingTokens = active != 0 ? rank.pendingTokens(lastSample, now) : Scratch.UNREAD;
                    long used = active == 0 ? LoadCosts.magnitude(backlog)
                            : LoadCosts.backlog(backlog, pendingTokens, active);
                    costs[k] = LoadCosts.prefill(used, 0, capacity);
                    if (terms) {
                        scratch.terms(k, field, pendingTokens, active, used, lastSample);
                    }
                }
                double c = costs[k];
                if (!stall && !Double.isNaN(c)) {
                    if (tied == 0 || c < best) {
                        best = c;
                        tied = 1;
                        first = k;
                    } else if (c == best) {
                        tied++;
                    }
                }
            }
        }
        if (!anyFresh) {
            locateAndStage(scratch, parts, n, decode, anyUnstalled, Math.floorMod(cursor.getAndIncrement(), (long) n),
                    est, now);
            return SelectionReason.ROUND_ROBIN_STALE;
        }
        for (int i = 0; !anyUnstalled && i < n; i++) {
            if (Double.isNaN(costs[i])) {
                continue;
            }
            int cmp = tied == 0 ? -1 : Double.compare(costs[i], best);
            if (cmp < 0) {
                best = costs[i];
                tied = 0;
                first = i;
            }
            if (cmp <= 0) {
                tied++;
            }
        }
        // anyFresh guarantees a defined cost unless its capacity is missing; then nobody has a defined cost.
        if (tied == 0) {
            locateAndStage(scratch, parts, n, decode, anyUnstalled, Math.floorMod(cursor.getAndIncrement(), (long) n),
                    est, now);
            return SelectionReason.ROUND_ROBIN_STALE;
        }
        int winner = first;
        if (tied > 1) {
            long skip = Math.floorMod(cursor.getAndIncrement(), (long) tied);
            for (int i = first; ; i++) {
                if (!Double.isNaN(costs[i]) && !(anyUnstalled && stalled[i]) && Double.compare(costs[i], best) == 0
                        && skip-- == 0) {
                    winner = i;
                    break;
                }
            }
        }
        locateAndStage(scratch, parts, n, decode, anyUnstalled, winner, est, now);
        return SelectionReason.LOAD;
    }

    /** {@link #locate}, after copying the phase's terms for a decision record when one is wanted. */
    private static void locateAndStage(Scratch scratch, int parts, int n, boolean decode, boolean anyUnstalled,
            long winner, long est, long now) {
        if (scratch.staging.active) {
            DecisionCapture.loadPhase(scratch.staging, decode, scratch, parts, n, anyUnstalled, (int) winner, est, now);
        }
        locate(scratch, parts, winner);
    }

    /**
     * Session affinity: locates the candidate that is {@code rank} (the request's session binding) when it is one of
     * the first {@code parts} entries of {@code scratch.parts} and not stalled; false otherwise (no binding, the rank
     * left, its namespace is not offered, or it stalled), and the caller picks as usual.
     */
    boolean session(Scratch scratch, int parts, @Nullable SampleKey rank, long now) {
        if (rank == null) {
            return false;
        }
        for (int part = 0; part < parts; part++) {
            CandidateRanks ranks = scratch.parts[part];
            for (int i = 0; i < ranks.size; i++) {
                WorkerPin pin = ranks.pins[i];
                if (pin.dpRank() == rank.dpRank() && pin.worker().equals(rank.worker())) {
                    ranks.read(i, store, scratch.reading);
                    long lastSample = scratch.reading.held() ? scratch.reading.receivedNanos() : DispatchLedger.NO_SAMPLE;
                    if (ranks.ledgers[i].stalled(lastSample, now)) {
                        return false;
                    }
                    scratch.part = part;
                    scratch.at = i;
                    return true;
                }
            }
        }
        return false;
    }

    /** Sets {@code scratch.part}/{@code scratch.at} to the {@code position}-th candidate of the parts. */
    static void locate(Scratch scratch, int parts, long position) {
        int left = (int) position;
        for (int part = 0; part < parts; part++) {
            int size = scratch.parts[part].size;
            if (left < size) {
                scratch.part = part;
                scratch.at = left;
                return;
            }
            left -= size;
        }
        throw new IllegalStateException("candidate " + position + " out of range");
    }

    /** Records a load-based pick: the whole estimate is uncached, and no block hashes are known. */
    Selection.Dispatch record(CandidateRanks decode, int d, @Nullable CandidateRanks prefill, int p,
            long est, long now) {
        return record(decode, d, prefill, p, est, est, est, null, null, now);
    }

    /**
     * Records the dispatches of a pick in the ledger and as one active sequence, and returns its handle.
     *
     * @param est           the prompt's tokens (the sequence's blocks)
     * @param uncached      the prompt tokens the prefilling rank does not hold (its ledger's tokens and blocks)
     * @param decodeUncached the prompt tokens the decode rank does not hold (its ledger's blocks)
     * @param decodeHashes  the prompt's block hashes in the decode rank's block size, or null
     * @param prefillHashes the same for the prefill rank, or null
     */
    Selection.Dispatch record(CandidateRanks decode, int d, @Nullable CandidateRanks prefill, int p, long est,
            long uncached, long decodeUncached, @Nullable BlockHashes decodeHashes,
            @Nullable BlockHashes prefillHashes, long now) {
        // The ledger counts what a dispatch adds to its rank, not the whole prompt: the prefilling rank computes the
        // uncached tokens, and a rank holding a prefix stores only the blocks after it (the engine shares cached
        // blocks between requests, so its next kv_used_blocks grows by those only). A rank holding the prefix must
        // not look as busy as one that prefills and stores everything, or a burst sharing a prefix is spread over
        // the fleet.
        long decodeTicket = add(decode, d, prefill == null ? uncached : est, decodeUncached, prefill == null, now);
        long prefillTicket = prefill == null ? RankLedger.NO_COUNTER : add(prefill, p, uncached, uncached, true, now);
        Sequence s = sequences.take();
        if (s == null) {
            // At the bound of tracked sequences (counted): the ledger still records the dispatch.
            return PickDispatch.of(decode.ledgers[d], decodeTicket, prefill == null ? null : prefill.ledgers[p],
                    prefillTicket);
        }
        s.decode = decode.sequences[d];
        s.decodeLedger = decode.ledgers[d];
        s.decodeTicket = decodeTicket;
        s.decodeBlocks = LoadCosts.ceilDiv(est, decode.ledgerBlockSize[d]);
        s.decodeHashes = decodeHashes;
        if (prefill == null) {
            s.prefill = null;
            s.prefillLedger = null;
            s.prefillTicket = RankLedger.NO_COUNTER;
            s.prefillBlocks = 0;
            s.prefillHashes = null;
        } else {
            s.prefill = prefill.sequences[p];
            s.prefillLedger = prefill.ledgers[p];
            s.prefillTicket = prefillTicket;
            s.prefillBlocks = LoadCosts.ceilDiv(est, prefill.ledgerBlockSize[p]);
            s.prefillHashes = prefillHashes;
        }
        s.prefillTokens = uncached;
        return new TrackedDispatch(s, sequences.start(s, now));
    }

    /** Adds {@code tokens} of prefill and the blocks of {@code storedTokens} to rank i's ledger. */
    private long add(CandidateRanks ranks, int i, long tokens, long storedTokens, boolean stallEligible, long now) {
        RankSlot.Reading latest = SCRATCH.get().reading;
        ranks.read(i, store, latest);
        return ranks.ledgers[i].add(tokens, LoadCosts.ceilDiv(storedTokens, ranks.ledgerBlockSize[i]), stallEligible,
                latest.held() ? latest.receivedNanos() : DispatchLedger.NO_SAMPLE, now);
    }

    /** This thread's working space (the KV-aware picker shares it for its candidate parts). */
    static Scratch scratch() {
        return SCRATCH.get();
    }

    SelectionMetrics metrics() {
        return metrics;
    }

    LoadStore store() {
        return store;
    }

    LongSupplier ticker() {
        return ticker;
    }

    /**
     * Trims the ledger and forgets departed ranks, ends the active sequences of departed ranks, and takes fresh
     * slots for detached ones ({@link #refreshSlots}); run periodically by the upkeep task.
     */
    void sweepLedger() {
        long now = ticker.getAsLong();
        ledger.sweep(now);
        sequences.drain(now, true);
        refreshSlots();
    }

    /** Drains the active sequences' queue (dedup, listeners, expiry); run often by the upkeep task. */
    void drainSequences() {
        sequences.drain(ticker.getAsLong(), false);
    }

    /** The active sequences this picker records into. */
    ActiveSequences sequences() {
        return sequences;
    }

    /** Test access: ranks with unanswered dispatches. */
    int ledgerKeys() {
        return ledger.keys();
    }

    /** Test access: the ledger of one rank. */
    RankLedger rankLedger(dev.continuum.router.load.SampleKey key) {
        return ledger.rank(key);
    }

    /** Test access: rank ledgers with a ring (ranks dispatched to at least once). */
    int rings() {
        return ledger.rings();
    }

    /** Test access: rank ledgers held. */
    int ledgers() {
        return ledger.ledgers();
    }
}
