package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.SampleKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The seed's load-only picker (mirrors Dynamo's load-only cost formulas):
 * <ul>
 *   <li>prefill cost = (active_prefill_tokens + unanswered prompt tokens) / max_num_batched_tokens</li>
 *   <li>decode cost = (active_decode_blocks, else kv_used_blocks, + unanswered blocks
 *       + ceil(estimated_prompt_tokens / block_size)) / total_kv_blocks</li>
 * </ul>
 * One candidate per dp_rank. Decode is chosen first across every offered namespace, then prefill within the
 * decode winner's namespace, so a pair never crosses graphs.
 *
 * <p>Per phase: when at least one candidate has a fresh sample carrying the phase's field, the lowest defined
 * cost wins ({@code load}); quiet candidates (no sample, or a last sample without backlog) compete with zero
 * backlog; silent-under-load candidates and those missing a capacity have no cost and are not chosen;
 * stalled candidates are chosen only when no other candidate has a cost; equal costs rotate on the phase's
 * cursor. When none has such a sample, the phase's cursor rotates over all candidates
 * ({@code round_robin_stale}, or {@code round_robin_no_signal} when the source has no load signal), and
 * stalls are ignored since nothing could have answered.
 *
 * <p>Thread-safe without locks: the snapshot and samples are immutable, the cursors are atomics, and the
 * ledger is a concurrent map of immutable arrays.
 */
final class LoadBasedPicker implements DynamoWorkerPicker {
    /**
     * Dynamo's default {@code kv_cache_block_size}, used only to size a ledger entry of a worker whose card
     * omits it (such a worker has no decode cost, but its prefill dispatches still count toward a stall).
     */
    static final long DEFAULT_BLOCK_SIZE = 16;
    /**
     * Ranks considered per worker. {@code data_parallel_size} comes from fleet-authored cards; the load store
     * holds at most 65,536 keys in all, so more ranks than this per worker could never all carry load.
     */
    static final int MAX_RANKS_PER_WORKER = 4096;

    private enum Phase { PREFILL, DECODE }

    /** One candidate rank. */
    private record Candidate(DynamoWorker worker, long rank, SampleKey key) {
    }

    private record Choice(Candidate candidate, SelectionReason reason) {
    }

    private final LoadStore store;
    private final LongSupplier ticker;
    private final SelectionMetrics metrics;
    private final DispatchLedger ledger;
    private final AtomicLong prefillCursor = new AtomicLong();
    private final AtomicLong decodeCursor = new AtomicLong();

    LoadBasedPicker(LoadStore store, LongSupplier ticker, SelectionMetrics metrics) {
        this.store = Objects.requireNonNull(store, "store");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.ledger = new DispatchLedger(ticker.getAsLong());
    }

    @Override
    public @Nullable Selection pick(DynamoSnapshot snapshot, PickRequest request) {
        long now = ticker.getAsLong();
        List<DynamoWorker> serving = serving(snapshot, request);
        if (serving.isEmpty()) {
            return null;
        }
        List<Candidate> decodeCandidates = decodeCandidates(serving);
        if (decodeCandidates.isEmpty()) {
            return null;
        }
        boolean signal = snapshot.signals().load();
        long est = request.estimatedPromptTokens();
        Choice decode = choose(decodeCandidates, Phase.DECODE, decodeCursor, signal, est, now);

        Choice prefill = null;
        if (decode.candidate.worker.role() == WorkerRole.DECODE) {
            List<Candidate> prefillCandidates = new ArrayList<>();
            String ns = decode.candidate.worker.namespace();
            for (DynamoWorker w : serving) {
                if (w.role() == WorkerRole.PREFILL && w.namespace().equals(ns)) {
                    addRanks(prefillCandidates, w);
                }
            }
            if (!prefillCandidates.isEmpty()) {
                prefill = choose(prefillCandidates, Phase.PREFILL, prefillCursor, signal, est, now);
            }
        }
        SelectionReason prefillReason = prefill == null ? SelectionReason.NO_PREFILL_POOL : prefill.reason;
        metrics.record(decode.reason, prefillReason);

        Selection.Dispatch dispatch = record(decode.candidate, prefill == null ? null : prefill.candidate, est, now);
        return new Selection(pin(decode.candidate), prefill == null ? null : pin(prefill.candidate),
                decode.reason, prefillReason, dispatch);
    }

    /** Routable workers of the offered namespaces whose card serves the model, in registry order. */
    private static List<DynamoWorker> serving(DynamoSnapshot snapshot, PickRequest request) {
        List<DynamoWorker> out = new ArrayList<>();
        for (DynamoWorker w : snapshot.workers()) {
            if (w.role() != WorkerRole.UNKNOWN && request.namespaces().contains(w.namespace())
                    && request.model().equals(w.model())) {
                out.add(w);
            }
        }
        return out;
    }

    /**
     * The seed's "Mixed namespaces": in a namespace with prefill and decode workers only decode workers are
     * decode candidates (Dynamo serves no prefill/aggregated pair); elsewhere decode and aggregated are.
     */
    private static List<Candidate> decodeCandidates(List<DynamoWorker> serving) {
        Map<String, Integer> roles = new HashMap<>();
        for (DynamoWorker w : serving) {
            roles.merge(w.namespace(), 1 << w.role().ordinal(), (a, b) -> a | b);
        }
        int pairBits = (1 << WorkerRole.PREFILL.ordinal()) | (1 << WorkerRole.DECODE.ordinal());
        List<Candidate> out = new ArrayList<>();
        for (DynamoWorker w : serving) {
            boolean paired = (roles.get(w.namespace()) & pairBits) == pairBits;
            if (w.role() == WorkerRole.DECODE || (w.role() == WorkerRole.AGGREGATED && !paired)) {
                addRanks(out, w);
            }
        }
        return out;
    }

    private static void addRanks(List<Candidate> out, DynamoWorker w) {
        ModelCard card = w.card();
        Integer size = card == null ? null : card.dataParallelSize();
        Integer start = card == null ? null : card.dataParallelStartRank();
        long first = start == null ? 0 : Integer.toUnsignedLong(start);
        long count = size == null ? 1 : Math.max(1, Math.min(Integer.toUnsignedLong(size), MAX_RANKS_PER_WORKER));
        for (long r = first; r < first + count && r <= 0xFFFF_FFFFL; r++) {
            out.add(new Candidate(w, r, new SampleKey(w.id(), r)));
        }
    }

    private Choice choose(List<Candidate> candidates, Phase phase, AtomicLong cursor, boolean signal, long est,
            long now) {
        if (!signal) {
            return new Choice(rotate(candidates, cursor), SelectionReason.ROUND_ROBIN_NO_SIGNAL);
        }
        // Ages are measured on the picker's ticker, which is the store's (the ledger compares the two as well);
        // one clock read per decision instead of one per candidate, and no Duration per candidate.
        long maxStaleNanos = store.maxStaleness().toNanos();
        int n = candidates.size();
        double[] costs = new double[n];
        boolean[] stalled = new boolean[n];
        boolean anyFresh = false;
        for (int i = 0; i < n; i++) {
            Candidate c = candidates.get(i);
            LoadSample latest = store.latest(c.key);
            boolean fresh = latest != null && now - latest.receivedNanos() <= maxStaleNanos;
            Long field = fresh ? phaseField(latest, phase) : null;
            anyFresh |= field != null;
            long backlog;
            if (field != null) {
                backlog = field;
            } else if (!fresh && (latest == null || !latest.reportsBacklog())) {
                backlog = 0; // quiet: an idle worker publishes zero and falls silent
            } else {
                costs[i] = Double.NaN; // silent under load, or a fresh sample without the phase's field
                continue;
            }
            DispatchLedger.Pending pending = latest == null ? ledger.pending(c.key, now)
                    : ledger.pending(c.key, latest.receivedNanos(), now);
            stalled[i] = pending.stalled();
            costs[i] = cost(c.worker, phase, backlog, pending, est);
        }
        if (!anyFresh) {
            return new Choice(rotate(candidates, cursor), SelectionReason.ROUND_ROBIN_STALE);
        }
        boolean anyUnstalled = false;
        for (int i = 0; i < n; i++) {
            anyUnstalled |= !Double.isNaN(costs[i]) && !stalled[i];
        }
        double best = Double.NaN;
        List<Candidate> tied = new ArrayList<>(2);
        for (int i = 0; i < n; i++) {
            if (Double.isNaN(costs[i]) || (anyUnstalled && stalled[i])) {
                continue;
            }
            int cmp = Double.isNaN(best) ? -1 : Double.compare(costs[i], best);
            if (cmp < 0) {
                best = costs[i];
                tied.clear();
            }
            if (cmp <= 0) {
                tied.add(candidates.get(i));
            }
        }
        // anyFresh guarantees a defined cost unless its capacity is missing; then nobody has a defined cost.
        if (tied.isEmpty()) {
            return new Choice(rotate(candidates, cursor), SelectionReason.ROUND_ROBIN_STALE);
        }
        return new Choice(tied.size() == 1 ? tied.get(0) : rotate(tied, cursor), SelectionReason.LOAD);
    }

    private static @Nullable Long phaseField(LoadSample sample, Phase phase) {
        return phase == Phase.PREFILL ? sample.load().activePrefillTokens() : sample.load().decodeBlocks();
    }

    /** The phase's cost, or NaN when the card lacks the capacity it needs. */
    private static double cost(DynamoWorker w, Phase phase, long backlog, DispatchLedger.Pending pending,
            long est) {
        ModelCard.WorkerCapacity cap = w.capacity();
        if (phase == Phase.PREFILL) {
            Long maxBatched = cap.maxNumBatchedTokens();
            return maxBatched == null || maxBatched <= 0 ? Double.NaN
                    : (double) (backlog + pending.tokens()) / maxBatched;
        }
        Long total = cap.totalKvBlocks();
        Integer blockSize = w.card() == null ? null : w.card().kvCacheBlockSize();
        if (total == null || total <= 0 || blockSize == null || blockSize <= 0) {
            return Double.NaN;
        }
        return (double) (backlog + pending.blocks() + ceilDiv(est, blockSize)) / total;
    }

    private static Candidate rotate(List<Candidate> candidates, AtomicLong cursor) {
        return candidates.get((int) Math.floorMod(cursor.getAndIncrement(), (long) candidates.size()));
    }

    private Selection.Dispatch record(Candidate decode, @Nullable Candidate prefill, long est, long now) {
        DispatchLedger.Entry d = new DispatchLedger.Entry(est, ceilDiv(est, blockSize(decode.worker)), now,
                prefill == null);
        add(decode, d, now);
        if (prefill == null) {
            return d::end;
        }
        DispatchLedger.Entry p = new DispatchLedger.Entry(est, ceilDiv(est, blockSize(prefill.worker)), now, true);
        add(prefill, p, now);
        return () -> {
            d.end();
            p.end();
        };
    }

    private void add(Candidate c, DispatchLedger.Entry entry, long now) {
        LoadSample latest = store.latest(c.key);
        ledger.add(c.key, entry, latest == null ? DispatchLedger.NO_SAMPLE : latest.receivedNanos(), now);
    }

    private static long blockSize(DynamoWorker w) {
        Integer bs = w.card() == null ? null : w.card().kvCacheBlockSize();
        return bs == null || bs <= 0 ? DEFAULT_BLOCK_SIZE : bs;
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    private static WorkerPin pin(Candidate c) {
        ModelCard card = c.worker.card();
        return new WorkerPin(c.worker.id(), c.worker.role(), c.rank, card != null && card.dataParallelSize() != null);
    }

    /** Test access: ranks with unanswered dispatches. */
    int ledgerKeys() {
        return ledger.keys();
    }
}
