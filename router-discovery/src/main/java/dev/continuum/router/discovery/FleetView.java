package dev.continuum.router.discovery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the reducer publishes: the materialized workers (sorted by namespace, then instance ID) and the
 * publishers that can be subscribed to (sorted the same way). Immutable. Lookups by identity binary-search
 * the sorted lists, so publishing a view is one list copy, not an index rebuild: a 16,384-worker fleet
 * publishes in tens of microseconds.
 */
public final class FleetView {
    private static final FleetView EMPTY = new FleetView(List.of(), List.of());

    private final List<DynamoWorker> workers;
    private final List<DynamoPublisher> publishers;

    private FleetView(List<DynamoWorker> workers, List<DynamoPublisher> publishers) {
        this.workers = workers;
        this.publishers = publishers;
    }

    public static FleetView empty() {
        return EMPTY;
    }

    /**
     * Wraps immutable lists that are already sorted by identity, without copying (the reducer keeps its state
     * sorted). The caller vouches for both: unsorted input breaks lookups.
     */
    public static FleetView sorted(List<DynamoWorker> workers, List<DynamoPublisher> publishers) {
        return new FleetView(List.copyOf(workers), List.copyOf(publishers));
    }

    /** Sorts arbitrary collections (tests, pruning); identities must be unique. */
    public static FleetView of(Collection<DynamoWorker> workers, Collection<DynamoPublisher> publishers) {
        List<DynamoWorker> w = new ArrayList<>(workers);
        w.sort(Comparator.comparing(DynamoWorker::id));
        List<DynamoPublisher> p = new ArrayList<>(publishers);
        p.sort(Comparator.comparing(DynamoPublisher::id));
        return new FleetView(List.copyOf(w), List.copyOf(p));
    }

    public List<DynamoWorker> workers() {
        return workers;
    }

    public List<DynamoPublisher> publishers() {
        return publishers;
    }

    public Optional<DynamoWorker> worker(WorkerId id) {
        return find(workers, DynamoWorker::id, id);
    }

    public Optional<DynamoPublisher> publisher(PublisherId id) {
        return find(publishers, DynamoPublisher::id, id);
    }

    /** Binary search by identity (the lists are random-access and sorted). */
    private static <T, I extends Comparable<I>> Optional<T> find(List<T> sorted, Function<T, I> identity, I id) {
        int low = 0;
        int high = sorted.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            T candidate = sorted.get(middle);
            int order = identity.apply(candidate).compareTo(id);
            if (order < 0) {
                low = middle + 1;
            } else if (order > 0) {
                high = middle - 1;
            } else {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The same fleet with only the workers and publishers of the given namespaces. */
    public FleetView retainNamespaces(Collection<String> namespaces) {
        return new FleetView(workers.stream().filter(w -> namespaces.contains(w.namespace())).toList(),
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
