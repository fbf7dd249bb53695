package dev.continuum.router.discovery.reducer;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.FleetView;
import java.time.Clock;
import java.util.List;

/**
 * Folds discovery events into a fleet view. A pure function of its event stream (plus the clock that stamps
 * {@code first_seen} and {@code last_updated}): the same events give the same view, whether they come from
 * etcd, the file store or a test script. Not thread-safe: one watcher thread owns it.
 */
public interface DiscoveryReducer {
    /**
     * @param namespaces the watched Dynamo namespaces; records under other prefixes are ignored
     * @param carryOver  the view a replaced watcher published: until this reducer's first resync, a worker it
     *                   materializes unchanged keeps that view's instance (timestamps included), and a changed
     *                   one keeps its {@code first_seen}; so a backoff-only or namespaces-only restart neither
     *                   resets timestamps nor bumps the generation for workers that did not change
     */
    static DiscoveryReducer create(List<String> namespaces, DiscoveryLimits limits, Clock clock,
                                   DiscoveryCounters counters, FleetView carryOver) {
        return new EtcdRecordReducer(namespaces, limits, clock, counters, carryOver);
    }

    static DiscoveryReducer create(List<String> namespaces, Clock clock, DiscoveryCounters counters) {
        return create(namespaces, DiscoveryLimits.defaults(), clock, counters, FleetView.empty());
    }

    /** Applies one event; returns whether the fleet view changed. */
    boolean apply(DiscoveryEvent event);

    /** Applies events in order; returns whether the fleet view changed. */
    default boolean applyAll(List<? extends DiscoveryEvent> events) {
        boolean changed = false;
        for (DiscoveryEvent event : events) {
            changed |= apply(event);
        }
        return changed;
    }

    /**
     * Keys refused at a keyspace's capacity that would fit now, oldest refusal first (only keys are kept). The
     * watcher reads their current state from the source and applies it; each read key then either enters,
     * leaves the memory (deleted, bad) or, if the room was taken meanwhile, keeps its place.
     */
    List<String> admissible();

    /** The current view; the same instance until the next change. */
    FleetView view();

    /** The watched namespaces. */
    List<String> namespaces();
}
