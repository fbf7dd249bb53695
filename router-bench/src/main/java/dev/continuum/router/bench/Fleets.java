package dev.continuum.router.bench;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Hand-built disaggregated fleets for the picker and the shim: one namespace, half decode and half prefill,
 * each worker a card with the example card's capacities (docs/decisions.md) and {@code data_parallel_size} ranks.
 */
final class Fleets {
    static final String NS = "dynamo";
    static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
    static final int BLOCK_SIZE = 64;
    static final long TOTAL_KV_BLOCKS = 12_000;
    static final long MAX_BATCHED_TOKENS = 8_192;

    private Fleets() {
    }

    /** {@code ranks} candidate ranks in all (decode + prefill), as the hand-written PickerBenchmark builds them. */
    static List<DynamoWorker> disaggregated(int ranks) {
        int dp = dpSize(ranks);
        int workersPerRole = Math.max(1, ranks / 2 / dp);
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 0; i < workersPerRole; i++) {
            workers.add(worker(0x7a00_0000_0000_1000L + i, WorkerRole.DECODE, dp));
            workers.add(worker(0x7b00_0000_0090_0000L + i, WorkerRole.PREFILL, dp));
        }
        return workers;
    }

    static int dpSize(int ranks) {
        return Math.min(8, Math.max(1, ranks / 2));
    }

    static DynamoWorker worker(long instanceId, WorkerRole role, int dpSize) {
        ModelCard card = new ModelCard(ChatBodies.MODEL, null, false, BLOCK_SIZE,
                new ModelCard.WorkerCapacity(TOTAL_KV_BLOCKS, MAX_BATCHED_TOKENS, 256L, 32_768L), 0, dpSize, null,
                ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(NS, instanceId), role, role.wireName(), "generate", card, T0, T0);
    }

    static DynamoSnapshot snapshot(List<DynamoWorker> workers) {
        return new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of(NS), 1, true,
                FleetView.of(workers, List.of()));
    }
}
