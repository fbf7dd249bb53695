package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.etcd.EtcdWatchSource;
import dev.continuum.router.discovery.file.FileStoreSource;
import dev.continuum.router.discovery.kubernetes.KubernetesClients;
import dev.continuum.router.discovery.kubernetes.KubernetesLimits;
import dev.continuum.router.discovery.kubernetes.KubernetesMetadataSource;
import dev.continuum.router.discovery.kubernetes.MetadataLimits;
import dev.continuum.router.discovery.kubernetes.KubernetesPodSource;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.source.WatchSource;
import java.time.Clock;

/** The production sources: etcd, Dynamo's file store and the two Kubernetes sources. */
final class DefaultWatchSources {
    private DefaultWatchSources() {
    }

    static WatchSource create(DiscoveryConfig config, DiscoveryCounters counters) {
        return switch (config.source()) {
            case ETCD -> new EtcdWatchSource(config.etcd(), counters);
            case FILE -> new FileStoreSource(config.file(), Clock.systemUTC(), counters, DiscoveryLimits.defaults());
            case KUBERNETES_PODS -> new KubernetesPodSource(config.kubernetes(),
                    KubernetesClients.inClusterFirst(System.getenv()), counters, KubernetesLimits.defaults());
            case KUBERNETES -> new KubernetesMetadataSource(config.kubernetes(),
                    KubernetesClients.inClusterFirst(System.getenv()), counters, KubernetesLimits.defaults(),
                    MetadataLimits.defaults());
        };
    }
}
