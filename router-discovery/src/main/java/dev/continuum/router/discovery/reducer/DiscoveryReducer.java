package dev.continuum.router.discovery.reducer;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Folds discovery events into a fleet view. A pure function of its event stream (plus the clock that stamps
 * {@code first_seen} and {@code last_updated}): the same events give the same view, whether they come from
 * etcd, the file store or a test script. Not thread-safe: one watcher thread owns it.
 */
public interface DiscoveryReducer {
    /**
     * @param namespaces the watched Dynamo namespaces; records under other prefixes are ignored
     * @param firstSeen  {@code first_seen} of workers already known (kept across a namespaces edit)
     */
    static DiscoveryReducer create(List<String> namespaces, DiscoveryLimits limits, Clock clock,
                                   DiscoveryCounters counters, Map<WorkerId, Instant> firstSeen) {
        return new EtcdRecordReducer(namespaces, limits, clock, counters, firstSeen);
    }

    static DiscoveryReducer create(List<String> namespaces, Clock clock, DiscoveryCounters counters) {
        return create(namespaces, DiscoveryLimits.defaults(), clock, counters, Map.of());
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

    /** The current view; the same instance until the next change. */
    FleetView view();

    /** The watched namespaces. */
    List<String> namespaces();
}
