package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.etcd.EtcdWatchSource;
import dev.continuum.router.discovery.file.FileStoreSource;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.source.WatchSource;
import java.time.Clock;

/** The production sources: etcd and Dynamo's file store. */
final class DefaultWatchSources {
    private DefaultWatchSources() {
    }

    static WatchSource create(DiscoveryConfig config, DiscoveryCounters counters) {
        return switch (config.source()) {
            case ETCD -> new EtcdWatchSource(config.etcd(), counters);
            case FILE -> new FileStoreSource(config.file(), Clock.systemUTC(), counters, DiscoveryLimits.defaults());
            case KUBERNETES, KUBERNETES_PODS -> throw new IllegalArgumentException(
                    "dynamo.discovery.source: \"" + config.source().configName() + "\" (expected: etcd or file; the "
                            + "Kubernetes sources are not in this build)");
        };
    }
}
