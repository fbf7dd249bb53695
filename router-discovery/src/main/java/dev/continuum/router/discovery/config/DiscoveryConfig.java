package dev.continuum.router.discovery.config;

import dev.continuum.router.discovery.DiscoverySourceKind;
import java.util.List;
import java.util.Objects;

/** {@code dynamo.discovery}: which source, and its settings. */
public record DiscoveryConfig(DiscoverySourceKind source, EtcdConfig etcd, FileStoreConfig file,
                              KubernetesConfig kubernetes) {
    public DiscoveryConfig {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(etcd, "etcd");
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(kubernetes, "kubernetes");
    }

    /** The settings of the sources that existed before the Kubernetes ones; the Kubernetes section at defaults. */
    public DiscoveryConfig(DiscoverySourceKind source, EtcdConfig etcd, FileStoreConfig file) {
        this(source, etcd, file, KubernetesConfig.defaults());
    }

    public static DiscoveryConfig defaults() {
        return new DiscoveryConfig(DiscoverySourceKind.ETCD, EtcdConfig.defaults(), FileStoreConfig.defaults());
    }

    public static DiscoveryConfig etcd(EtcdConfig etcd) {
        return new DiscoveryConfig(DiscoverySourceKind.ETCD, etcd, FileStoreConfig.defaults());
    }

    public static DiscoveryConfig file(FileStoreConfig file) {
        return new DiscoveryConfig(DiscoverySourceKind.FILE, EtcdConfig.defaults(), file);
    }

    /** {@code source: kubernetes_pods} or {@code source: kubernetes} ({@code kind}) with these settings. */
    public static DiscoveryConfig kubernetes(DiscoverySourceKind kind, KubernetesConfig kubernetes) {
        if (kind != DiscoverySourceKind.KUBERNETES && kind != DiscoverySourceKind.KUBERNETES_PODS) {
            throw new IllegalArgumentException("kind: " + kind + " (expected: KUBERNETES or KUBERNETES_PODS)");
        }
        return new DiscoveryConfig(kind, EtcdConfig.defaults(), FileStoreConfig.defaults(), kubernetes);
    }

    public boolean kubernetesSource() {
        return source == DiscoverySourceKind.KUBERNETES || source == DiscoverySourceKind.KUBERNETES_PODS;
    }

    /** The namespaces the active source watches. */
    public List<String> namespaces() {
        return switch (source) {
            case FILE -> file.effectiveNamespaces();
            case ETCD -> etcd.effectiveNamespaces();
            case KUBERNETES, KUBERNETES_PODS -> kubernetes.effectiveDynamoNamespaces();
        };
    }

    /** The reconnect backoff of the active source (the file store's is not configurable: it rarely fails). */
    public BackoffConfig backoff() {
        return switch (source) {
            case FILE -> BackoffConfig.defaults();
            case ETCD -> etcd.watchReconnectBackoff();
            case KUBERNETES, KUBERNETES_PODS -> kubernetes.watchReconnectBackoff();
        };
    }
}
