package dev.continuum.router.load;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the load supervisor follows: one registry generation's kv_metrics publishers and live workers.
 * Immutable; built from a snapshot with {@link #from(DynamoSnapshot)} on every generation change.
 *
 * @param generation   the registry generation it was taken at
 * @param publishers   the kv_metrics publishers (other topics are ignored)
 * @param liveWorkers  the workers samples may be admitted for
 */
public record LoadTargets(long generation, List<DynamoPublisher> publishers, Set<WorkerId> liveWorkers) {
    public static final LoadTargets EMPTY = new LoadTargets(0, List.of(), Set.of());

    public LoadTargets {
        publishers = publishers.stream().filter(p -> p.topic() == PublisherTopic.KV_METRICS).toList();
        liveWorkers = Set.copyOf(liveWorkers);
        Objects.requireNonNull(publishers, "publishers");
    }

    /** The kv_metrics publishers and worker identities of a registry snapshot (a disabled registry has none). */
    public static LoadTargets from(DynamoSnapshot snapshot) {
        if (!snapshot.enabled()) {
            return new LoadTargets(snapshot.generation(), List.of(), Set.of());
        }
        return new LoadTargets(snapshot.generation(), snapshot.publishers(),
                snapshot.workers().stream().map(DynamoWorker::id).collect(Collectors.toSet()));
    }
}
