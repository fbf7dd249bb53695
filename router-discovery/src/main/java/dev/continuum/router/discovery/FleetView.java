package dev.continuum.router.discovery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * What the reducer publishes: the materialized workers (sorted by namespace, then instance ID) and the
 * publishers that can be subscribed to (sorted the same way), with lookups by identity. Immutable.
 */
public final class FleetView {
    private static final FleetView EMPTY = new FleetView(List.of(), Map.of(), List.of(), Map.of());

    private final List<DynamoWorker> workers;
    private final Map<WorkerId, DynamoWorker> workersById;
    private final List<DynamoPublisher> publishers;
    private final Map<PublisherId, DynamoPublisher> publishersById;

    private FleetView(List<DynamoWorker> workers, Map<WorkerId, DynamoWorker> workersById,
                      List<DynamoPublisher> publishers, Map<PublisherId, DynamoPublisher> publishersById) {
        this.workers = workers;
        this.workersById = workersById;
        this.publishers = publishers;
        this.publishersById = publishersById;
    }

    public static FleetView empty() {
        return EMPTY;
    }

    /** Copies already-sorted maps (the reducer keeps its state in sorted maps, so no sort is needed). */
    public static FleetView copyOf(SortedMap<WorkerId, DynamoWorker> workers,
                                   SortedMap<PublisherId, DynamoPublisher> publishers) {
        return new FleetView(List.copyOf(workers.values()), Collections.unmodifiableMap(new HashMap<>(workers)),
                List.copyOf(publishers.values()), Collections.unmodifiableMap(new HashMap<>(publishers)));
    }

    /** Sorts and indexes arbitrary collections (tests, pruning). */
    public static FleetView of(Collection<DynamoWorker> workers, Collection<DynamoPublisher> publishers) {
        List<DynamoWorker> w = new ArrayList<>(workers);
        w.sort((a, b) -> a.id().compareTo(b.id()));
        List<DynamoPublisher> p = new ArrayList<>(publishers);
        p.sort((a, b) -> a.id().compareTo(b.id()));
        Map<WorkerId, DynamoWorker> wById = new HashMap<>();
        w.forEach(worker -> wById.put(worker.id(), worker));
        Map<PublisherId, DynamoPublisher> pById = new HashMap<>();
        p.forEach(publisher -> pById.put(publisher.id(), publisher));
        return new FleetView(List.copyOf(w), Collections.unmodifiableMap(wById), List.copyOf(p),
                Collections.unmodifiableMap(pById));
    }

    public List<DynamoWorker> workers() {
        return workers;
    }

    public List<DynamoPublisher> publishers() {
        return publishers;
    }

    public Optional<DynamoWorker> worker(WorkerId id) {
        return Optional.ofNullable(workersById.get(id));
    }

    public Optional<DynamoPublisher> publisher(PublisherId id) {
        return Optional.ofNullable(publishersById.get(id));
    }

    /** The same fleet with only the workers and publishers of the given namespaces. */
    public FleetView retainNamespaces(Collection<String> namespaces) {
        return of(workers.stream().filter(w -> namespaces.contains(w.namespace())).toList(),
                publishers.stream().filter(p -> namespaces.contains(p.namespace())).toList());
    }

    /** Equal when workers (timestamps included) and publishers are equal. */
    @Override
    public boolean equals(Object other) {
        return other instanceof FleetView v && workers.equals(v.workers) && publishers.equals(v.publishers);
    }

    @Override
    public int hashCode() {
        return workers.hashCode() * 31 + publishers.hashCode();
    }

    @Override
    public String toString() {
        return "FleetView[" + workers.size() + " workers, " + publishers.size() + " publishers]";
    }
}
