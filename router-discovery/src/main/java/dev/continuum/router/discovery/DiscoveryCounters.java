package dev.continuum.router.discovery;

/** Where the reducer and the watchers count what happened; the metrics binding implements it. */
@FunctionalInterface
public interface DiscoveryCounters {
    DiscoveryCounters NONE = kind -> {
    };

    void increment(DiscoveryEventKind kind);
}
