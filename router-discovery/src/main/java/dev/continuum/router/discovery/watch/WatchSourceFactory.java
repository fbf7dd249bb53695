package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.source.WatchSource;

/** Builds the source a watcher reads, from the live settings. Tests supply scripted sources. */
@FunctionalInterface
public interface WatchSourceFactory {
    WatchSource create(DiscoveryConfig config, DiscoveryCounters counters);
}
