package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.etcd.EtcdReader;
import dev.continuum.router.discovery.etcd.EtcdWatchSource;
import dev.continuum.router.discovery.file.FileStoreSource;
import dev.continuum.router.discovery.kubernetes.KubernetesClients;
import dev.continuum.router.discovery.kubernetes.KubernetesLimits;
import dev.continuum.router.discovery.kubernetes.KubernetesMetadataSource;
import dev.continuum.router.discovery.kubernetes.KubernetesPodSource;
import dev.continuum.router.discovery.kubernetes.MetadataLimits;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.source.WatchSource;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * The production sources: etcd, Dynamo's file store and the two Kubernetes sources, built on the
 * supervisor's clock and record limits (not the system clock and default limits), and with etcd
 * clients closed on the supervisor's scheduler.
 */
final class DefaultWatchSources implements WatchSourceFactory {
    private final Clock clock;
    private final DiscoveryLimits limits;
    private final Supplier<ScheduledExecutorService> etcdCloser;

    DefaultWatchSources(Clock clock, DiscoveryLimits limits, Supplier<ScheduledExecutorService> etcdCloser) {
        this.clock = clock;
        this.limits = limits;
        this.etcdCloser = etcdCloser;
    }

    @Override
    public WatchSource create(DiscoveryConfig config, DiscoveryCounters counters) {
        return switch (config.source()) {
            case ETCD -> new EtcdWatchSource(config.etcd(),
                    etcd -> EtcdReader.connect(etcd, etcdCloser.get()), counters);
            case FILE -> new FileStoreSource(config.file(), clock, counters, limits);
            case KUBERNETES_PODS -> new KubernetesPodSource(config.kubernetes(),
                    KubernetesClients.inClusterFirst(System.getenv()), counters, KubernetesLimits.defaults());
            case KUBERNETES -> new KubernetesMetadataSource(config.kubernetes(),
                    KubernetesClients.inClusterFirst(System.getenv()), counters, KubernetesLimits.defaults(),
                    MetadataLimits.defaults());
        };
    }
}
