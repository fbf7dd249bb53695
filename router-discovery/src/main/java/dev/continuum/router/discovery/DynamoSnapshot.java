package dev.continuum.router.discovery;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One immutable, consistent view of the discovered fleet, read lock-free from
 * {@link DynamoRegistry#snapshot()}. A writer builds a new snapshot and swaps it in whole: readers never see
 * half an update.
 *
 * @param enabled    whether discovery runs in the live configuration
 * @param source     the source that produced the fleet view
 * @param namespaces the configured Dynamo namespaces (the first is the primary one)
 * @param generation the registry generation this snapshot was published under; connection-state changes
 *                   swap the snapshot without a new generation
 * @param connected  whether every watch of the current pass is open
 * @param fleet      workers and publishers
 */
public record DynamoSnapshot(
        boolean enabled,
        DiscoverySourceKind source,
        List<String> namespaces,
        long generation,
        boolean connected,
        FleetView fleet) {

    /** Dynamo's default namespace ({@code DYN_NAMESPACE} unset). */
    public static final String DEFAULT_NAMESPACE = "dynamo";

    public DynamoSnapshot {
        Objects.requireNonNull(source, "source");
        namespaces = List.copyOf(namespaces);
        Objects.requireNonNull(fleet, "fleet");
    }

    /** The snapshot of a registry whose discovery is off. */
    public static DynamoSnapshot disabled(long generation) {
        return new DynamoSnapshot(false, DiscoverySourceKind.ETCD, List.of(DEFAULT_NAMESPACE), generation, false,
                FleetView.empty());
    }

    /** The primary namespace: the first configured one. */
    public String namespace() {
        return namespaces.isEmpty() ? DEFAULT_NAMESPACE : namespaces.get(0);
    }

    public Signals signals() {
        return source.signals();
    }

    public List<DynamoWorker> workers() {
        return fleet.workers();
    }

    public List<DynamoPublisher> publishers() {
        return fleet.publishers();
    }

    public Optional<DynamoWorker> worker(String namespace, long instanceId) {
        return fleet.worker(new WorkerId(namespace, instanceId));
    }

    DynamoSnapshot withFleet(FleetView newFleet, long newGeneration) {
        return new DynamoSnapshot(enabled, source, namespaces, newGeneration, connected, newFleet);
    }

    DynamoSnapshot withConnected(boolean newConnected) {
        return new DynamoSnapshot(enabled, source, namespaces, generation, newConnected, fleet);
    }
}
