package dev.continuum.router.load;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the load supervisor follows: one registry generation's kv_metrics publishers and live workers.
 * Immutable; built from a snapshot with {@link #from(DynamoSnapshot)} on every generation change.
 *
 * @param generation   the registry generation it was taken at
 * @param publishers   the kv_metrics publishers (other topics are ignored)
 * @param liveWorkers  the workers samples may be admitted for, each with the ranks its card declares
 */
public record LoadTargets(long generation, List<DynamoPublisher> publishers, Map<WorkerId, DpRanks> liveWorkers) {
    public static final LoadTargets EMPTY = new LoadTargets(0, List.of(), Map.of());

    public LoadTargets {
        publishers = publishers.stream().filter(p -> p.topic() == PublisherTopic.KV_METRICS).toList();
        liveWorkers = Map.copyOf(liveWorkers);
        Objects.requireNonNull(publishers, "publishers");
    }

    /** The kv_metrics publishers and worker identities of a registry snapshot (a disabled registry has none). */
    public static LoadTargets from(DynamoSnapshot snapshot) {
        if (!snapshot.enabled()) {
            return new LoadTargets(snapshot.generation(), List.of(), Map.of());
        }
        Map<WorkerId, DpRanks> live = new HashMap<>();
        for (DynamoWorker worker : snapshot.workers()) {
            live.put(worker.id(), DpRanks.of(worker.card()));
        }
        return new LoadTargets(snapshot.generation(), snapshot.publishers(), live);
    }
}
