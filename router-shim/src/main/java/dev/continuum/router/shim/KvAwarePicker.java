package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.load.LoadSample;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The KV-overlap-aware picker (docs/kv-routing.md): it scores the ranks that would prefill a request with the
 * KV formula of {@link KvCosts}, crediting each for the leading prompt blocks it already holds according to
 * the {@link PrefixOverlap} index. It shares the load-based picker's candidate index (who may serve the
 * request, the namespace rules), dispatch ledger (unanswered dispatches, stalls) and selection counters, and
 * hands a request to that picker whole when it has nothing to add: no encoded prompt (tokenizer, artifact or
 * render fallbacks, counted under their result) or no kv-events publisher in any offered namespace.
 *
 * <p>Which ranks are scored with the KV formula:
 * <ul>
 *   <li>no offered namespace pairs prefill with decode workers (an aggregated fleet): the decode candidates
 *       (aggregated, or decode workers without a prefill pool), each prefilling its own requests;</li>
 *   <li>otherwise: the prefill workers of the decode winner's namespace. The decode winner is chosen by the
 *       load-only rule, or with conditional disaggregation by {@link KvCosts#conditionalDecode}, after which
 *       the request may skip the prefill worker ({@link #bypass}).</li>
 * </ul>
 *
 * <p>Per phase, when any rank has a fresh sample carrying the phase's backlog (active prefill tokens for
 * prefill workers, decode blocks for aggregated and decode workers), those ranks and quiet ranks compete on
 * the formula and the rest sit out (stalled ranks only when nothing else has a cost, as in the load-based
 * picker). When none has, every rank competes on {@link KvCosts#withoutLoad}. At temperature 0 the lowest
 * cost wins and equal costs rotate on the phase's cursor; above 0 the winner is sampled by {@link Softmax}.
 *
 * <p><b>Hot path.</b> No locks and, beyond what the load-based picker allocates (the selection and its
 * dispatch record), no allocation: costs and the index's answers live in per-thread scratch space.
 */
final class KvAwarePicker implements DynamoWorkerPicker {
    /** Ranks one index answer can hold: the index's bound on owners of one block. */
    static final int MAX_OVERLAP_RANKS = 4096;
    /** Block sizes one prompt is hashed for (the KV pipeline's bound per model). */
    static final int MAX_BLOCK_SIZES = 2;

    private static final ThreadLocal<KvScratch> SCRATCH = ThreadLocal.withInitial(KvScratch::new);

    /** What is scored in one choice. */
    enum Phase {
        /** Prefill workers of a disaggregated pair: backlog = active prefill tokens. */
        PREFILL,
        /** Aggregated candidates: backlog = decode blocks, plus prefill tokens when reported. */
        AGGREGATED,
        /** Decode workers under conditional disaggregation: backlog = decode blocks. */
        CONDITIONAL_DECODE
    }

    private final LoadBasedPicker load;
    private final PrefixOverlap index;
    private final Supplier<KvPickerSettings> settings;
    private final KvSelectionMetrics kvMetrics;
    private final DoubleSupplier random;
    private final KvPickListener listener;
    private final AtomicLong prefillCursor = new AtomicLong();
    private final AtomicLong decodeCursor = new AtomicLong();
    private volatile KvFed fed = new KvFed(FleetView.empty(), Set.of());

    /** The namespaces of one fleet view that have a kv-events publisher. */
    private record KvFed(FleetView fleet, Set<String> namespaces) {
    }

    /** Without a listener: kv-events alone feed the index. */
    KvAwarePicker(LoadBasedPicker load, PrefixOverlap index, Supplier<KvPickerSettings> settings,
            KvSelectionMetrics kvMetrics, DoubleSupplier random) {
        this(load, index, settings, kvMetrics, random, KvPickListener.NONE);
    }

    /**
     * @param load     the load-based picker whose index, ledger and counters this picker shares
     * @param index    the KV index's read side
     * @param settings the live {@code dynamo.kv} knobs, read once per pick
     * @param random   uniform samples in [0, 1) for softmax sampling (thread-safe)
     * @param listener told each KV-scored pick, and which namespaces run in approximate mode
     */
    KvAwarePicker(LoadBasedPicker load, PrefixOverlap index, Supplier<KvPickerSettings> settings,
            KvSelectionMetrics kvMetrics, DoubleSupplier random, KvPickListener listener) {
        this.load = Objects.requireNonNull(load, "load");
        this.index = Objects.requireNonNull(index, "index");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.kvMetrics = Objects.requireNonNull(kvMetrics, "kvMetrics");
        this.random = Objects.requireNonNull(random, "random");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** Per-thread working space of one decision. */
    static final class KvScratch {
        double[] costs = new double[64];
        boolean[] defined = new boolean[64];
        boolean[] stalled = new boolean[64];
        boolean[] eligible = new boolean[64];
        long[] blockSize = new long[64];
        int[] overlap = new int[64];
        /** Decision-record terms: the phase's sample field (-1 absent), the sample's other counter, the ledger's. */
        long[] backlog = new long[64];
        long[] other = new long[64];
        long[] ledgerTokens = new long[64];
        long[] ledgerBlocks = new long[64];
        /** Prefill backlog tokens taken off because the rank is prefilling them for a request sharing the prefix. */
        long[] inFlight = new long[64];
        /** The backlogs the formula used (every source combined, the in-flight share taken off), and this router's
         *  active sequences for the phase's field (-1 where the rank was not scored): the record's terms. */
        long[] prefillUsed = new long[64];
        long[] decodeUsed = new long[64];
        long[] active = new long[64];
        final OverlapScores[] scores = {new OverlapScores(MAX_OVERLAP_RANKS), new OverlapScores(MAX_OVERLAP_RANKS)};
        final boolean[] looked = new boolean[MAX_BLOCK_SIZES];
        /** The block sizes whose hashes this pick resolved, and the hashes (null: not hashed at that size). */
        final long[] resolvedSize = new long[MAX_BLOCK_SIZES];
        final @Nullable BlockHashes[] resolved = new BlockHashes[MAX_BLOCK_SIZES];
        int resolvedCount;
        @Nullable PromptBlocks prompt;
        /** Candidates tied at the lowest cost in this thread's last {@link #lowest}. */
        int tied;

        void candidates(int n) {
            if (costs.length < n) {
                int size = Math.max(n, costs.length * 2);
                costs = new double[size];
                defined = new boolean[size];
                stalled = new boolean[size];
                eligible = new boolean[size];
                blockSize = new long[size];
                overlap = new int[size];
                backlog = new long[size];
                other = new long[size];
                ledgerTokens = new long[size];
                ledgerBlocks = new long[size];
                inFlight = new long[size];
                prefillUsed = new long[size];
                decodeUsed = new long[size];
                active = new long[size];
            }
        }

        /** Starts a pick of prompt {@code p}: nothing resolved for an earlier prompt is answered again. */
        void prompt(PromptBlocks p) {
            prompt = p;
            looked[0] = false;
            looked[1] = false;
            clearResolved();
        }

        /** Ends the pick: the thread's scratch keeps no reference to its prompt or the prompt's hashes. */
        void release() {
            prompt = null;
            clearResolved();
        }

        private void clearResolved() {
            for (int m = 0; m < resolvedCount; m++) {
                resolved[m] = null;
            }
            resolvedCount = 0;
        }

        /**
         * The prompt's block hashes at {@code size}, or null when it was not hashed at that size: resolved once per
         * block size and pick (a fleet has one or two sizes; a third is looked up each time).
         */
        @Nullable BlockHashes hashes(long size) {
            PromptBlocks p = prompt;
            if (p == null) {
                return null;
            }
            for (int m = 0; m < resolvedCount; m++) {
                if (resolvedSize[m] == size) {
                    return resolved[m];
                }
            }
            BlockHashes h = hashesFor(p, size);
            if (resolvedCount < MAX_BLOCK_SIZES) {
                resolvedSize[resolvedCount] = size;
                resolved[resolvedCount++] = h;
            }
            return h;
        }

        /** Leading prompt blocks (worker, rank) holds at {@code size}; one index lookup per block size and pick. */
        int overlap(PrefixOverlap index, long size, long workerId, long rank) {
            PromptBlocks p = prompt;
            if (p == null) {
                return 0;
            }
            List<BlockHashes> hashes = p.blockHashes();
            for (int j = 0; j < Math.min(MAX_BLOCK_SIZES, hashes.size()); j++) {
                BlockHashes h = hashes.get(j);
                if (h.blockSize() == size) {
                    if (!looked[j]) {
                        index.findMatches(h, scores[j]);
                        looked[j] = true;
                    }
                    return scores[j].matchedBlocksOf(workerId, (int) rank);
                }
            }
            return 0;
        }
    }

    @Override
    public @Nullable Selection pick(DynamoSnapshot snapshot, PickRequest request) {
        PromptBlocks prompt = request.prompt();
        if (prompt == null) {
            KvSelectionResult why = request.kvFallback();
            return loadBased(snapshot, request, why == null ? KvSelectionResult.TOKENIZER_UNAVAILABLE : why);
        }
        CandidateIndex.ModelCandidates model = load.index(snapshot).model(request.model());
        if (model == null) {
            return null;
        }
        Set<String> kvNamespaces = fed(snapshot);
        LoadBasedPicker.Scratch parts = LoadBasedPicker.scratch();
        CandidateIndex.Group[] groups = model.groups();
        parts.parts(groups.length);
        Set<String> offered = request.namespaces();
        int nParts = 0;
        int n = 0;
        boolean paired = false;
        boolean kvFed = false;
        for (CandidateIndex.Group g : groups) {
            CandidateRanks decode = g.decode();
            if (decode.size > 0 && offered.contains(g.namespace())) {
                parts.parts[nParts++] = decode;
                n += decode.size;
                paired |= decode.prefill != null && hasDecodeWorker(decode);
                kvFed |= kvNamespaces.contains(g.namespace()) || listener.approximate(g.namespace(), false);
            }
        }
        if (n == 0) {
            return null;
        }
        if (!kvFed) {
            // Nobody publishes what the index would need: the load-based decision, as the spec's fallback.
            return loadBased(snapshot, request, KvSelectionResult.NO_OVERLAP);
        }
        KvPickerSettings set = settings.get();
        KvScratch kv = SCRATCH.get();
        kv.prompt(prompt);
        long now = load.ticker().getAsLong();
        boolean signal = snapshot.signals().load();
        long isl = prompt.promptTokens();

        SelectionReason decodeReason;
        SelectionReason prefillReason = SelectionReason.NO_PREFILL_POOL;
        KvSelectionResult result;
        CandidateRanks prefill = null;
        int p = -1;
        if (load.session(parts, nParts, request.sessionRank(), now)) {
            decodeReason = SelectionReason.SESSION;
        } else if (!paired) {
            decodeReason = choose(parts, nParts, n, Phase.AGGREGATED, decodeCursor, set, kv, isl, signal, now);
        } else if (set.conditionalDisaggregation()) {
            decodeReason = choose(parts, nParts, n, Phase.CONDITIONAL_DECODE, decodeCursor, set, kv, isl, signal,
                    now);
        } else {
            decodeReason = load.choose(parts, nParts, n, true, decodeCursor, signal, isl, now);
        }
        CandidateRanks decode = parts.parts[parts.part];
        int d = parts.at;
        int decodeOverlap = overlapOf(kv, decode, d);
        result = decodeOverlap > 0 ? KvSelectionResult.OVERLAP : KvSelectionResult.NO_OVERLAP;
        CandidateRanks pool = paired && decode.pins[d].role() == WorkerRole.DECODE ? decode.prefill : null;
        if (pool != null) {
            if (set.conditionalDisaggregation() && bypass(decode, d, decodeOverlap, isl, set, now)) {
                prefillReason = SelectionReason.CONDITIONAL_BYPASS;
                result = KvSelectionResult.BYPASS;
            } else {
                prefill = pool;
                parts.parts[0] = pool;
                prefillReason = choose(parts, 1, pool.size, Phase.PREFILL, prefillCursor, set, kv, isl, signal, now);
                p = parts.at;
                result = kv.overlap[p] > 0 ? KvSelectionResult.OVERLAP : KvSelectionResult.NO_OVERLAP;
            }
        }
        load.metrics().record(decodeReason, prefillReason);
        kvMetrics.count(result);
        parts.staging.result = result;
        BlockHashes decodeHashes = kv.hashes(cardBlockSize(decode, d));
        BlockHashes prefillHashes = prefill == null ? null : kv.hashes(cardBlockSize(prefill, p));
        // The listener learns the rank that prefills: the pair's prefill rank, else the decode rank.
        if (prefill != null) {
            predict(prefill, p, prefillHashes);
        } else {
            predict(decode, d, decodeHashes);
        }
        // The rank that prefills computes what it does not hold: the pair's prefill rank, else the decode rank.
        long decodeUncached = uncached(isl, cardBlockSize(decode, d), decodeOverlap);
        long uncached = prefill != null ? uncached(isl, kv.blockSize[p], kv.overlap[p]) : decodeUncached;
        Selection.Dispatch dispatch = load.record(decode, d, prefill, p, isl, uncached, decodeUncached, decodeHashes,
                prefillHashes, now);
        kv.release();
        return new Selection(decode.pins[d], prefill == null ? null : prefill.pins[p], decodeReason, prefillReason,
                dispatch);
    }

    /**
     * The tokens of the rank's prefill backlog that this router's own in-flight prefills there compute for a prefix
     * this request shares (docs/kv-routing.md, "In-flight prefixes"): the request waits for them instead of
     * computing them again elsewhere, so they are not work it adds. Only asked of ranks holding an overlap.
     */
    private static long inFlightShared(KvScratch kv, RankSequences rank, long blockSize, int overlap) {
        if (overlap <= 0) {
            return 0;
        }
        BlockHashes hashes = kv.hashes(blockSize);
        return hashes == null ? 0 : rank.prefilling.sharedTokens(hashes, overlap);
    }

    /** A prefill backlog less the shared in-flight tokens, never below zero. */
    private static long withoutShared(long backlog, long shared) {
        return Math.max(0, backlog - shared);
    }

    /** Tells the listener that rank {@code i} of {@code ranks} will prefill blocks {@code hashes} (if hashed). */
    private void predict(CandidateRanks ranks, int i, @Nullable BlockHashes hashes) {
        if (hashes != null) {
            listener.picked(ranks.pins[i], hashes);
        }
    }

    /** Prompt tokens a rank holding {@code overlap} leading blocks of size {@code blockSize} still computes. */
    private static long uncached(long isl, long blockSize, int overlap) {
        // overlap < 2^31 and blockSize <= 65536, so the product fits a long.
        return blockSize <= 0 ? isl : Math.max(0, isl - (long) Math.max(0, overlap) * blockSize);
    }

    /** The prompt's hashes in {@code blockSize}, or null (a card without a block size, or one not hashed). */
    private static @Nullable BlockHashes hashesFor(PromptBlocks prompt, long blockSize) {
        List<BlockHashes> hashes = prompt.blockHashes();
        for (int j = 0; j < hashes.size(); j++) {
            if (hashes.get(j).blockSize() == blockSize) {
                return hashes.get(j);
            }
        }
        return null;
    }

    private @Nullable Selection loadBased(DynamoSnapshot snapshot, PickRequest request, KvSelectionResult why) {
        Selection s = load.pick(snapshot, request);
        if (s != null) {
            kvMetrics.count(why);
            LoadBasedPicker.scratch().staging.result = why;
        }
        return s;
    }

    private static boolean hasDecodeWorker(CandidateRanks ranks) {
        for (int i = 0; i < ranks.size; i++) {
            if (ranks.pins[i].role() == WorkerRole.DECODE) {
                return true;
            }
        }
        return false;
    }

    private Set<String> fed(DynamoSnapshot snapshot) {
        KvFed current = fed;
        FleetView fleet = snapshot.fleet();
        if (current.fleet == fleet) {
            return current.namespaces;
        }
        Set<String> namespaces = new HashSet<>();
        for (DynamoPublisher pub : snapshot.publishers()) {
            if (pub.topic() == PublisherTopic.KV_EVENTS) {
                namespaces.add(pub.namespace());
            }
        }
        KvFed built = new KvFed(fleet, Set.copyOf(namespaces));
        fed = built;
        return built.namespaces;
    }

    /** The block size a rank is scored with, or 0 when its card names none (then it holds no overlap). */
    private static long cardBlockSize(CandidateRanks ranks, int i) {
        return ranks.costBlockSize[i];
    }

    private int overlapOf(KvScratch kv, CandidateRanks ranks, int i) {
        long bs = cardBlockSize(ranks, i);
        return bs > 0 ? kv.overlap(index, bs, ranks.pins[i].worker().instanceId(), ranks.pins[i].dpRank()) : 0;
    }

    /**
     * Scores the {@code n} candidates of the first {@code nParts} parts for {@code phase}, leaves the winner in
     * {@code parts.part}/{@code parts.at} and its overlap in {@code kv.overlap} at its position.
     */
    private SelectionReason choose(LoadBasedPicker.Scratch parts, int nParts, int n, Phase phase, AtomicLong cursor,
            KvPickerSettings set, KvScratch kv, long isl, boolean signal, long now) {
        kv.candidates(n);
        long maxStaleNanos = load.store().maxStaleness().toNanos();
        boolean anyFresh = false;
        boolean anyUnstalled = false;
        int k = 0;
        for (int part = 0; part < nParts; part++) {
            CandidateRanks ranks = parts.parts[part];
            for (int i = 0; i < ranks.size; i++, k++) {
                long cardBs = cardBlockSize(ranks, i);
                long bs = cardBs > 0 ? cardBs : ranks.ledgerBlockSize[i];
                kv.blockSize[k] = bs;
                kv.overlap[k] = overlapOf(kv, ranks, i);
                LoadSample latest = signal ? ranks.sample(i, load.store()) : null;
                LoadSample fresh = latest != null && now - latest.receivedNanos() <= maxStaleNanos ? latest : null;
                Long field = fresh == null ? null
                        : phase == Phase.PREFILL ? fresh.load().activePrefillTokens() : fresh.load().decodeBlocks();
                anyFresh |= field != null;
                Long otherField = fresh == null ? null
                        : phase == Phase.PREFILL ? fresh.load().decodeBlocks() : fresh.load().activePrefillTokens();
                kv.backlog[k] = field == null ? -1 : field;
                kv.other[k] = otherField == null ? -1 : otherField;
                kv.ledgerTokens[k] = 0;
                kv.ledgerBlocks[k] = 0;
                kv.inFlight[k] = 0;
                kv.prefillUsed[k] = 0;
                kv.decodeUsed[k] = 0;
                kv.active[k] = -1;
                boolean quiet = fresh == null && (latest == null || !latest.reportsBacklog());
                if (field == null && !quiet) {
                    kv.defined[k] = false; // silent under load, or a fresh sample without the phase's field
                    kv.stalled[k] = false;
                    continue;
                }
                long lastSample = latest == null ? DispatchLedger.NO_SAMPLE : latest.receivedNanos();
                RankLedger ledger = ranks.ledgers[i];
                boolean stall = ledger.stalled(lastSample, now);
                kv.defined[k] = true;
                kv.stalled[k] = stall;
                anyUnstalled |= !stall;
                long backlog = field == null ? 0 : field;
                long pendingBlocks = ledger.pendingBlocks(lastSample, now);
                long pendingTokens = ledger.pendingTokens(lastSample, now);
                kv.ledgerTokens[k] = pendingTokens;
                kv.ledgerBlocks[k] = pendingBlocks;
                long inFlight = phase == Phase.CONDITIONAL_DECODE ? 0
                        : inFlightShared(kv, ranks.sequences[i], bs, kv.overlap[k]);
                kv.inFlight[k] = inFlight;
                long prefillBacklog;
                long decodeBacklog;
                switch (phase) {
                    case PREFILL -> {
                        Long decodeBlocks = fresh == null ? null : fresh.load().decodeBlocks();
                        prefillBacklog = withoutShared(
                                LoadCosts.backlog(backlog, pendingTokens, ledger.activePrefillTokens()), inFlight);
                        decodeBacklog = LoadCosts.backlog(decodeBlocks == null ? 0 : decodeBlocks, 0,
                                ledger.activeBlocks());
                        kv.active[k] = ledger.activePrefillTokens();
                    }
                    case AGGREGATED -> {
                        Long prefillTokens = fresh == null ? null : fresh.load().activePrefillTokens();
                        prefillBacklog = withoutShared(LoadCosts.backlog(prefillTokens == null ? 0 : prefillTokens,
                                pendingTokens, ledger.activePrefillTokens()), inFlight);
                        decodeBacklog = LoadCosts.backlog(backlog, pendingBlocks, ledger.activeBlocks());
                        kv.active[k] = ledger.activeBlocks();
                    }
                    default -> { // CONDITIONAL_DECODE
                        prefillBacklog = 0;
                        decodeBacklog = LoadCosts.backlog(backlog, pendingBlocks, ledger.activeBlocks());
                        kv.active[k] = ledger.activeBlocks();
                    }
                }
                kv.prefillUsed[k] = prefillBacklog;
                kv.decodeUsed[k] = decodeBacklog;
                kv.costs[k] = phase == Phase.CONDITIONAL_DECODE
                        ? KvCosts.conditionalDecode(decodeBacklog, isl, bs, kv.overlap[k], set)
                        : KvCosts.full(prefillBacklog, decodeBacklog, isl, bs, kv.overlap[k], set);
            }
        }
        boolean[] eligible = kv.eligible;
        if (!anyFresh) {
            // Nothing could have answered: every rank competes on overlap and request size, stalls ignored.
            for (int i = 0; i < n; i++) {
                kv.costs[i] = KvCosts.withoutLoad(isl, kv.blockSize[i], kv.overlap[i], set);
                eligible[i] = true;
            }
        } else {
            for (int i = 0; i < n; i++) {
                eligible[i] = kv.defined[i] && !(anyUnstalled && kv.stalled[i]);
            }
        }
        int winner;
        boolean rotated = false;
        double draw = Double.NaN;
        if (set.routerTemperature() > 0) {
            draw = random.getAsDouble();
            winner = Softmax.sample(kv.costs, eligible, n, set.routerTemperature(), draw);
        } else {
            winner = lowest(kv, n, cursor);
            rotated = kv.tied > 1;
        }
        if (winner < 0) {
            // Not expected (a fresh field always defines a cost): rotate over all rather than fail the request.
            winner = (int) Math.floorMod(cursor.getAndIncrement(), (long) n);
            rotated = true;
        }
        if (parts.staging.active) {
            DecisionCapture.kvPhase(parts.staging, phase, parts, nParts, n, kv, anyFresh, winner, draw, isl, set);
        }
        LoadBasedPicker.locate(parts, nParts, winner);
        if (!anyFresh && rotated) {
            return signal ? SelectionReason.ROUND_ROBIN_STALE : SelectionReason.ROUND_ROBIN_NO_SIGNAL;
        }
        return SelectionReason.KV_AWARE;
    }

    /**
     * The eligible candidate of lowest cost; equal costs rotate on {@code cursor} (advanced only on a tie), so
     * the choice is deterministic for a given cursor. Leaves the tie count in {@code kv.tied}; -1 when none is
     * eligible.
     */
    static int lowest(KvScratch kv, int n, AtomicLong cursor) {
        double best = Double.NaN;
        int tied = 0;
        int first = -1;
        for (int i = 0; i < n; i++) {
            if (!kv.eligible[i]) {
                continue;
            }
            int cmp = tied == 0 ? -1 : Double.compare(kv.costs[i], best);
            if (cmp < 0) {
                best = kv.costs[i];
                tied = 0;
                first = i;
            }
            if (cmp <= 0) {
                tied++;
            }
        }
        kv.tied = tied;
        if (tied <= 1) {
            return first;
        }
        long skip = Math.floorMod(cursor.getAndIncrement(), (long) tied);
        for (int i = first; ; i++) {
            if (kv.eligible[i] && Double.compare(kv.costs[i], best) == 0 && skip-- == 0) {
                return i;
            }
        }
    }

    /**
     * Conditional disaggregation's per-request decision for the decode winner: it prefills the request itself
     * when most of the prompt is already cached there ({@link KvCosts#mostlyCached}) and, with
     * {@code decode_busy_threshold}, its projected decode blocks (backlog, unanswered dispatches and this
     * request's uncached blocks) stay within that share of {@code total_kv_blocks}; a missing fresh sample or
     * capacity vetoes the bypass.
     */
    private boolean bypass(CandidateRanks ranks, int i, int overlap, long isl, KvPickerSettings set, long now) {
        long cardBs = cardBlockSize(ranks, i);
        if (cardBs <= 0 || !KvCosts.mostlyCached(isl, cardBs, overlap)) {
            return false;
        }
        Double threshold = set.decodeBusyThreshold();
        if (threshold == null) {
            return true;
        }
        double capacity = ranks.capacity[i];
        LoadSample latest = ranks.sample(i, load.store());
        if (Double.isNaN(capacity) || latest == null
                || now - latest.receivedNanos() > load.store().maxStaleness().toNanos()) {
            return false;
        }
        Long blocks = latest.load().decodeBlocks();
        if (blocks == null) {
            return false;
        }
        double projected = KvCosts.decode(LoadCosts.backlog(blocks,
                ranks.ledgers[i].pendingBlocks(latest.receivedNanos(), now), ranks.ledgers[i].activeBlocks()), isl, cardBs,
                overlap);
        return projected <= threshold * capacity;
    }
}
