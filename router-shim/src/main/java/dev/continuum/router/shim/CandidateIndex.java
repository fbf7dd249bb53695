package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.SampleKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may serve a request: for each model, per namespace, the decode and the prefill candidate ranks, built
 * once per fleet view (a registry generation) and read by every pick without allocating. It is the one place
 * that applies the candidate rules:
 * <ul>
 *   <li>only workers with a known role whose card serves the model are candidates;</li>
 *   <li>one candidate per dp_rank of the card's range ({@code data_parallel_start_rank}, then
 *       {@code data_parallel_size} ranks, 1 when absent, at most {@link #MAX_RANKS_PER_WORKER});</li>
 *   <li>mixed namespaces: in a namespace with prefill and decode workers of the model only decode workers
 *       are decode candidates (Dynamo serves no prefill/aggregated pair); elsewhere decode and aggregated
 *       workers are;</li>
 *   <li>prefill candidates are the prefill workers of the decode winner's namespace.</li>
 * </ul>
 * Namespaces keep registry order (the fleet view is sorted by namespace, then instance ID), so rotations
 * visit candidates in the order they did when the picker scanned the fleet per request.
 */
final class CandidateIndex {
    /**
     * Ranks considered per worker. {@code data_parallel_size} comes from fleet-authored cards; the load store
     * holds at most {@link LoadStore#MAX_ENTRIES} keys in all, so more ranks than this per worker could never
     * all carry load.
     */
    static final int MAX_RANKS_PER_WORKER = 4096;
    /**
     * Ranks held by one index, across every model: a bound on the memory a fleet's cards can make the index
     * take (about 210 bytes a rank with its load-store slot, plus the 656-byte dispatch ring of each rank once it has been picked, and about 64 bytes of active-sequence
     * state).
     * Workers whose ranks do not fit are left out, with a warning.
     */
    static final int MAX_RANKS = 4 * LoadStore.MAX_ENTRIES;

    private static final Logger LOG = LoggerFactory.getLogger(CandidateIndex.class);

    /** The candidate ranks of one namespace for one model. */
    record Group(String namespace, CandidateRanks decode) {
    }

    /** One model's groups, in namespace order. */
    record ModelCandidates(Group[] groups) {
    }

    /** The fleet view this index was built from (compared by identity) and its registry generation. */
    final FleetView fleet;
    final long generation;
    /** {@link LoadStore#detachedSlots()} read before the index took its slots. */
    final long detachedSlots;
    private final Map<String, ModelCandidates> models;

    private CandidateIndex(FleetView fleet, long generation, long detachedSlots, Map<String, ModelCandidates> models) {
        this.fleet = fleet;
        this.generation = generation;
        this.detachedSlots = detachedSlots;
        this.models = models;
    }

    /** The index before any snapshot: every real snapshot's generation is at least 0. */
    static CandidateIndex empty() {
        return new CandidateIndex(FleetView.empty(), Long.MIN_VALUE, Long.MIN_VALUE, Map.of());
    }

    /** Whether a slot this index holds was detached by the store (then a rebuild takes fresh ones). */
    boolean holdsDetachedSlot() {
        for (ModelCandidates m : models.values()) {
            for (Group g : m.groups()) {
                if (detached(g.decode()) || (g.decode().prefill != null && detached(g.decode().prefill))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean detached(CandidateRanks ranks) {
        for (int i = 0; i < ranks.size; i++) {
            if (ranks.slots[i].detached()) {
                return true;
            }
        }
        return false;
    }

    /** The model's candidates, or null when no routable worker serves it. */
    @Nullable ModelCandidates model(String model) {
        return models.get(model);
    }

    /**
     * Builds the index of {@code fleet} (of registry {@code generation}), taking rank slots from {@code store},
     * rank ledgers from {@code ledger} and rank sequences from {@code sequences}.
     */
    static CandidateIndex build(FleetView fleet, long generation, LoadStore store, DispatchLedger ledger,
            ActiveSequences sequences) {
        Ranks from = new Ranks(store, ledger, sequences);
        long detached = store.detachedSlots();
        // model -> namespace -> routable workers serving it, in registry order
        Map<String, Map<String, List<DynamoWorker>>> byModel = new HashMap<>();
        for (DynamoWorker w : fleet.workers()) {
            String model = w.model();
            if (w.role() != WorkerRole.UNKNOWN && model != null) {
                byModel.computeIfAbsent(model, m -> new LinkedHashMap<>())
                        .computeIfAbsent(w.namespace(), n -> new ArrayList<>()).add(w);
            }
        }
        Set<SampleKey> keys = new HashSet<>();
        int[] budget = {MAX_RANKS};
        int[] skipped = {0};
        Map<String, ModelCandidates> models = new HashMap<>();
        for (var model : byModel.entrySet()) {
            List<Group> groups = new ArrayList<>();
            for (var ns : model.getValue().entrySet()) {
                List<DynamoWorker> serving = ns.getValue();
                boolean hasPrefill = false;
                boolean hasDecode = false;
                for (DynamoWorker w : serving) {
                    hasPrefill |= w.role() == WorkerRole.PREFILL;
                    hasDecode |= w.role() == WorkerRole.DECODE;
                }
                boolean paired = hasPrefill && hasDecode;
                List<CandidateRanks.Rank> decode = new ArrayList<>();
                List<CandidateRanks.Rank> prefill = new ArrayList<>();
                for (DynamoWorker w : serving) {
                    if (w.role() == WorkerRole.PREFILL) {
                        addRanks(prefill, w, from, keys, budget, skipped);
                    } else if (w.role() == WorkerRole.DECODE || (w.role() == WorkerRole.AGGREGATED && !paired)) {
                        addRanks(decode, w, from, keys, budget, skipped);
                    }
                }
                CandidateRanks prefillRanks = prefill.isEmpty() ? null : new CandidateRanks(prefill, false, null);
                groups.add(new Group(ns.getKey(), new CandidateRanks(decode, true, prefillRanks)));
            }
            models.put(model.getKey(), new ModelCandidates(groups.toArray(Group[]::new)));
        }
        if (skipped[0] > 0) {
            LOG.warn("candidate index: {} workers left out, their ranks exceed the index bound of {}", skipped[0],
                    MAX_RANKS);
        }
        Set<SampleKey> indexedKeys = Set.copyOf(keys);
        ledger.indexed(indexedKeys);
        sequences.indexed(indexedKeys);
        return new CandidateIndex(fleet, generation, detached, models);
    }

    /** Where a rank's per-rank state comes from while an index is built. */
    private record Ranks(LoadStore store, DispatchLedger ledger, ActiveSequences sequences) {
    }

    private static void addRanks(List<CandidateRanks.Rank> out, DynamoWorker w, Ranks from, Set<SampleKey> keys,
            int[] budget, int[] skipped) {
        ModelCard card = w.card();
        Integer size = card == null ? null : card.dataParallelSize();
        Integer start = card == null ? null : card.dataParallelStartRank();
        long first = start == null ? 0 : Integer.toUnsignedLong(start);
        long count = size == null ? 1 : Math.max(1, Math.min(Integer.toUnsignedLong(size), MAX_RANKS_PER_WORKER));
        long last = Math.min(first + count - 1, 0xFFFF_FFFFL);
        long n = last - first + 1;
        if (n > budget[0]) {
            skipped[0]++;
            return;
        }
        budget[0] -= (int) n;
        for (long r = first; r <= last; r++) {
            SampleKey key = new SampleKey(w.id(), r);
            keys.add(key);
            RankLedger ledger = from.ledger().rank(key);
            out.add(new CandidateRanks.Rank(w, key, from.store().slot(key), ledger, from.sequences().rank(key, ledger)));
        }
    }
}
