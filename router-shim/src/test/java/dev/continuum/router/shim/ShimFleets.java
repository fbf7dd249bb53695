package dev.continuum.router.shim;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Hand-built workers and snapshots for picker and dispatch tests. */
final class ShimFleets {
    static final Instant T0 = Instant.parse("2026-09-23T04:11:02Z");
    static final String MODEL = "Qwen/Qwen3-0.6B";
    /** Block size of {@link #worker}: 16 tokens. */
    static final int BLOCK = 16;
    /** total_kv_blocks of {@link #worker}. */
    static final long KV = 1000;
    /** max_num_batched_tokens of {@link #worker}. */
    static final long BATCH = 1000;

    private ShimFleets() {
    }

    static DynamoWorker worker(String ns, long id, WorkerRole role) {
        return worker(ns, id, role, MODEL, null, null);
    }

    static DynamoWorker worker(String ns, long id, WorkerRole role, @Nullable String model,
            @Nullable Integer dpStart, @Nullable Integer dpSize) {
        ModelCard card = model == null ? null : new ModelCard(model, null, false, BLOCK,
                new ModelCard.WorkerCapacity(KV, BATCH, 256L, 32768L), dpStart, dpSize, null,
                ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(ns, id), role, role.wireName(), "generate", card, T0, T0);
    }

    /** A worker whose card lacks capacities (total_kv_blocks, max_num_batched_tokens). */
    static DynamoWorker noCapacity(String ns, long id, WorkerRole role) {
        ModelCard card = new ModelCard(MODEL, null, false, null, ModelCard.WorkerCapacity.UNKNOWN, null, null,
                null, ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(ns, id), role, role.wireName(), "generate", card, T0, T0);
    }

    static DynamoSnapshot snapshot(DynamoWorker... workers) {
        return snapshot(DiscoverySourceKind.ETCD, workers);
    }

    static DynamoSnapshot snapshot(DiscoverySourceKind source, DynamoWorker... workers) {
        List<String> namespaces = List.of(workers).stream().map(DynamoWorker::namespace).distinct().sorted()
                .toList();
        return new DynamoSnapshot(true, source, namespaces, 1, true, FleetView.of(List.of(workers), List.of()));
    }
}
