package dev.continuum.router.kv.index;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.events.KvEventDecoder;
import dev.continuum.router.kv.events.KvEvents;
import dev.continuum.router.load.DpRanks;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The index writer's state and rules, run on the writer thread only (tests drive it directly): the identity
 * gate, the ranks and their {@code event_id} cursors, the subscriptions that fed them, and the application
 * of each decoded event to the {@link RadixIndex}.
 *
 * <ul>
 *   <li><b>Gate.</b> An event is admitted only for a worker live in the latest fleet view under the
 *       publisher's namespace and a {@code dp_rank} its card declares. A newer fleet view removes every rank
 *       of a departed worker and every rank its card no longer declares in one index step.</li>
 *   <li><b>Cursors.</b> Per rank: an {@code event_id} below the cursor is a replay (skipped); equal to it is
 *       applied again (upstream may flush a removal and a store under one id; both are idempotent); above
 *       cursor + 1 is a gap: the rank is cleared, counted, and the event applied, so the rank rebuilds from
 *       the next root-anchored chains.</li>
 *   <li><b>Sources.</b> A rank belongs to the subscription that first fed it (another one's events for it
 *       are identity mismatches); one subscription creates at most {@code maxRanksPerSource} ranks; when it
 *       closes, its ranks leave the index in one step.</li>
 * </ul>
 */
final class IndexApplier {
    private static final Logger LOG = LoggerFactory.getLogger(IndexApplier.class);

    private final RadixIndex index;
    private final KvIndexMetrics metrics;
    private final PredictedBlocks predicted;
    private final KvEventDecoder decoder = new KvEventDecoder();
    private final KvEvents events = new KvEvents();

    // The gate: instance ID -> first entry; entries chained by namespace (instance IDs are cluster-unique in
    // practice, the chain only keeps a collision exact).
    private LongIntMap gate = new LongIntMap();
    private String[] gateNamespace = new String[0];
    private int[] gateStart = new int[0];
    private int[] gateSize = new int[0];
    private int[] gateNext = new int[0];
    private long generation = Long.MIN_VALUE;

    // Ranks by (worker, dp_rank): worker instance ID -> slot in workerRanks; each maps dp_rank -> rank id.
    private final LongIntMap workerSlots = new LongIntMap();
    private final List<@Nullable LongIntMap> workerRanks = new ArrayList<>();
    private final List<Integer> freeWorkerSlots = new ArrayList<>();
    // Per rank id.
    private long[] cursor = new long[16];
    private long[] rankWorker = new long[16];
    private long[] rankDp = new long[16];
    private Source[] rankSource = new Source[16]; // null where no rank
    private KvIndexMetrics.RankGauge[] rankGauge = new KvIndexMetrics.RankGauge[16]; // null where no rank
    private final Map<PublisherId, Source> sources = new HashMap<>();
    private int[] scratchRanks = new int[16];
    private boolean loggedMalformed;

    /** One subscription's ranks. */
    private static final class Source {
        final PublisherId id;
        int ranks;

        Source(PublisherId id) {
            this.id = id;
        }
    }

    IndexApplier(RadixIndex index, KvIndexMetrics metrics) {
        this(index, metrics, new PredictedBlocks(index.rootPath(), System::nanoTime, PredictedBlocks.Counts.NONE));
    }

    /** @param predicted the router's predictions, which stored blocks confirm and departed ranks take along */
    IndexApplier(RadixIndex index, KvIndexMetrics metrics, PredictedBlocks predicted) {
        this.index = index;
        this.metrics = metrics;
        this.predicted = predicted;
    }

    /** Decodes one kv-events payload of {@code publisher} and applies each of its events. */
    void applyPayload(PublisherId publisher, byte[] payload) {
        decoder.decode(payload, 0, payload.length, events);
        if (events.malformed() > 0) {
            metrics.count(KvEventResult.MALFORMED, events.malformed());
            if (!loggedMalformed) {
                loggedMalformed = true;
                LOG.warn("kv-events publisher {}: malformed records dropped (logged once; counted as result=malformed "
                        + "in continuum_dynamo_kv_events_total)", LogSafe.escape(publisher.toString()));
            }
        }
        for (int i = 0; i < events.size(); i++) {
            metrics.count(apply(publisher, events, i));
        }
    }

    KvEventResult apply(PublisherId publisher, KvEvents e, int i) {
        if (!e.indexable(i)) {
            return KvEventResult.OTHER_TIER;
        }
        long workerId = e.workerId(i);
        long dp = e.dpRank(i);
        if (!admitted(publisher.namespace(), workerId, dp)) {
            return KvEventResult.IDENTITY_MISMATCH;
        }
        int rank = rankOf(workerId, dp);
        if (rank < 0) {
            Source source = sources.computeIfAbsent(publisher, Source::new);
            if (source.ranks >= index.limits().maxRanksPerSource() || index.ranks() >= index.limits().maxRanks()) {
                if (source.ranks == 0) {
                    sources.remove(publisher, source);
                }
                return KvEventResult.OVER_CAPACITY;
            }
            rank = newRank(source, workerId, dp);
        } else {
            Source owner = rankSource[rank];
            if (owner == null || !owner.id.equals(publisher)) {
                return KvEventResult.IDENTITY_MISMATCH;
            }
            long id = e.eventId(i);
            long last = cursor[rank];
            if (Long.compareUnsigned(id, last) < 0) {
                return KvEventResult.REPLAY;
            }
            if (last != -1L && Long.compareUnsigned(id, last + 1) > 0) {
                index.clearRank(rank);
                metrics.count(KvEventResult.GAP);
            }
        }
        cursor[rank] = e.eventId(i);
        KvEventResult result = switch (e.kind(i)) {
            case CLEARED -> {
                index.clearRank(rank);
                yield KvEventResult.INDEXED;
            }
            case REMOVED -> {
                index.remove(rank, e.blockHashes(), e.blockFrom(i), e.blockCount(i));
                yield KvEventResult.INDEXED;
            }
            case STORED -> switch (index.store(rank, e.hasParent(i), e.parentHash(i), e.blockHashes(),
                    e.tokensHashes(), e.blockFrom(i), e.blockCount(i))) {
                case STORED -> {
                    confirm(rank, workerId, dp, e, i);
                    yield KvEventResult.INDEXED;
                }
                case OVER_CAPACITY -> KvEventResult.OVER_CAPACITY;
                case UNKNOWN_PARENT -> KvEventResult.UNKNOWN_PARENT;
            };
        };
        KvIndexMetrics.RankGauge gauge = rankGauge[rank];
        if (gauge != null) {
            gauge.blocks = index.blocksOf(rank);
        }
        return result;
    }

    /** The stored blocks are the index's now: their predictions leave the overlay. */
    private void confirm(int rank, long workerId, long dp, KvEvents e, int i) {
        if (predicted.entries() == 0) {
            return;
        }
        // The chain's parent is held (the store found it), so its path key is known.
        long parentPath = index.pathOf(rank, e.hasParent(i), e.parentHash(i), 0);
        if (parentPath != 0 || !e.hasParent(i)) {
            predicted.confirm(workerId, (int) dp, parentPath, e.tokensHashes(), e.blockFrom(i), e.blockCount(i));
        }
    }

    private boolean admitted(String namespace, long workerId, long dp) {
        for (int g = gate.get(workerId); g >= 0; g = gateNext[g]) {
            if (gateNamespace[g].equals(namespace)) {
                return dp >= gateStart[g] && dp < (long) gateStart[g] + gateSize[g];
            }
        }
        return false;
    }

    private int rankOf(long workerId, long dp) {
        int slot = workerSlots.get(workerId);
        if (slot < 0) {
            return -1;
        }
        LongIntMap ranks = workerRanks.get(slot);
        return ranks == null ? -1 : ranks.get(dp);
    }

    private int newRank(Source source, long workerId, long dp) {
        int rank = index.addRank(workerId, (int) dp);
        if (rank >= cursor.length) {
            int n = Math.max(rank + 1, cursor.length * 2);
            cursor = java.util.Arrays.copyOf(cursor, n);
            rankWorker = java.util.Arrays.copyOf(rankWorker, n);
            rankDp = java.util.Arrays.copyOf(rankDp, n);
            rankSource = java.util.Arrays.copyOf(rankSource, n);
            rankGauge = java.util.Arrays.copyOf(rankGauge, n);
        }
        int slot = workerSlots.get(workerId);
        if (slot < 0) {
            slot = freeWorkerSlots.isEmpty() ? workerRanks.size() : freeWorkerSlots.remove(freeWorkerSlots.size() - 1);
            if (slot == workerRanks.size()) {
                workerRanks.add(null);
            }
            workerRanks.set(slot, new LongIntMap());
            workerSlots.put(workerId, slot);
        }
        java.util.Objects.requireNonNull(workerRanks.get(slot)).put(dp, rank);
        rankWorker[rank] = workerId;
        rankDp[rank] = dp;
        rankSource[rank] = source;
        source.ranks++;
        rankGauge[rank] = metrics.rankGauge(source.id.namespace(), workerId, dp);
        return rank;
    }

    /** Applies a fleet view newer than the last one: departed workers and undeclared ranks leave at once. */
    void applyFleet(Map<WorkerId, DpRanks> live, long newGeneration) {
        if (newGeneration <= generation) {
            return;
        }
        generation = newGeneration;
        LongIntMap nextGate = new LongIntMap(live.size());
        int n = live.size();
        String[] ns = new String[n];
        int[] start = new int[n];
        int[] size = new int[n];
        int[] next = new int[n];
        int g = 0;
        for (Map.Entry<WorkerId, DpRanks> entry : live.entrySet()) {
            ns[g] = entry.getKey().namespace();
            start[g] = entry.getValue().start();
            size[g] = entry.getValue().size();
            next[g] = nextGate.put(entry.getKey().instanceId(), g); // chains an earlier entry (or -1)
            g++;
        }
        gate = nextGate;
        gateNamespace = ns;
        gateStart = start;
        gateSize = size;
        gateNext = next;
        removeWhere(rank -> {
            Source source = rankSource[rank];
            return source != null && !admitted(source.id.namespace(), rankWorker[rank], rankDp[rank]);
        });
        predicted.retain(this::admitted);
    }

    /** {@code publisher}'s subscription closed: its ranks leave the index and their cursors are forgotten. */
    void closeSource(PublisherId publisher) {
        Source source = sources.remove(publisher);
        if (source != null) {
            removeWhere(rank -> rankSource[rank] == source);
        }
    }

    private void removeWhere(java.util.function.IntPredicate doomed) {
        int n = 0;
        for (int rank = 0; rank < rankSource.length; rank++) {
            if (rankSource[rank] != null && doomed.test(rank)) {
                if (n == scratchRanks.length) {
                    scratchRanks = java.util.Arrays.copyOf(scratchRanks, n * 2);
                }
                scratchRanks[n++] = rank;
            }
        }
        if (n == 0) {
            return;
        }
        index.removeRanks(scratchRanks, n);
        for (int i = 0; i < n; i++) {
            forget(scratchRanks[i]);
        }
    }

    private void forget(int rank) {
        Source source = java.util.Objects.requireNonNull(rankSource[rank]);
        source.ranks--;
        if (source.ranks == 0) {
            sources.remove(source.id, source);
        }
        rankSource[rank] = null;
        KvIndexMetrics.RankGauge gauge = rankGauge[rank];
        if (gauge != null) {
            metrics.remove(gauge);
            rankGauge[rank] = null;
        }
        int slot = workerSlots.get(rankWorker[rank]);
        LongIntMap ranks = slot < 0 ? null : workerRanks.get(slot);
        if (ranks != null) {
            ranks.remove(rankDp[rank]);
            if (ranks.size() == 0) {
                workerRanks.set(slot, null);
                workerSlots.remove(rankWorker[rank]);
                freeWorkerSlots.add(slot);
            }
        }
    }

    /** Admitted ranks (tests). */
    int ranks() {
        int n = 0;
        for (Source s : rankSource) {
            if (s != null) {
                n++;
            }
        }
        return n;
    }
}
