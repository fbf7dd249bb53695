package dev.continuum.router.admin;

import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /admin/dynamo/ranks}: one row per discovered (worker, dp_rank) with its latest kv_metrics sample
 * (what the pickers read), for the fleet page. Bounded: at most {@link #MAX_RANKS} rows, then
 * {@code "truncated": true}. Read without a lock from the registry's snapshot and the load store.
 */
public final class FleetRanksEndpoint implements AdminRoute.Handler {
    public static final String PATH = "/admin/dynamo/ranks";
    /** Rows one answer holds; a fleet with more ranks is cut (the page is for people, not a fleet export). */
    static final int MAX_RANKS = 4096;
    /** Ranks per worker read when a card declares more (a card's dp_size is fleet input). */
    static final int MAX_RANKS_PER_WORKER = 1024;

    private final DynamoRegistry registry;
    private final LoadStore store;

    public FleetRanksEndpoint(DynamoRegistry registry, LoadStore store) {
        this.registry = registry;
        this.store = store;
    }

    @Override
    public LocalResponse handle(LocalRequest request) {
        DynamoSnapshot snapshot = registry.snapshot();
        List<Object> rows = new ArrayList<>();
        boolean truncated = false;
        for (DynamoWorker w : snapshot.workers()) {
            ModelCard card = w.card();
            Integer startRank = card == null ? null : card.dataParallelStartRank();
            Integer size = card == null ? null : card.dataParallelSize();
            long start = startRank == null ? 0 : Math.max(0, startRank);
            int ranks = size == null ? 1 : Math.max(1, Math.min(size, MAX_RANKS_PER_WORKER));
            for (int i = 0; i < ranks; i++) {
                if (rows.size() >= MAX_RANKS) {
                    truncated = true;
                    break;
                }
                rows.add(row(w, start + i));
            }
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("max_staleness_ms", store.maxStaleness().toMillis());
        body.put("ranks", rows);
        body.put("truncated", truncated);
        return AdminRoute.json(200, body);
    }

    private Map<String, Object> row(DynamoWorker w, long rank) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("instance_id", w.id().hex());
        m.put("namespace", w.namespace());
        m.put("role", w.role().wireName());
        m.put("model", w.model());
        m.put("dp_rank", rank);
        m.put("total_kv_blocks", w.capacity().totalKvBlocks());
        LoadSample s = store.latest(w.id(), rank);
        if (s == null) {
            m.put("sample", null);
            return m;
        }
        long age = store.age(s).toMillis();
        Map<String, Object> sample = new LinkedHashMap<>();
        sample.put("decode_blocks", s.load().decodeBlocks());
        sample.put("active_prefill_tokens", s.load().activePrefillTokens());
        sample.put("kv_used_blocks", s.load().kvUsedBlocks());
        sample.put("age_ms", age);
        sample.put("fresh", age <= store.maxStaleness().toMillis());
        m.put("sample", sample);
        return m;
    }
}
