package dev.continuum.router.discovery.config;

import dev.continuum.router.discovery.DiscoverySourceKind;
import java.util.List;
import java.util.Objects;

/** {@code dynamo.discovery}: which source, and its settings. */
public record DiscoveryConfig(DiscoverySourceKind source, EtcdConfig etcd, FileStoreConfig file) {
    public DiscoveryConfig {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(etcd, "etcd");
        Objects.requireNonNull(file, "file");
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

    /** The namespaces the active source watches. */
    public List<String> namespaces() {
        return source == DiscoverySourceKind.FILE ? file.effectiveNamespaces() : etcd.effectiveNamespaces();
    }

    /** The reconnect backoff of the active source (the file store's is not configurable: it rarely fails). */
    public BackoffConfig backoff() {
        return source == DiscoverySourceKind.FILE ? BackoffConfig.defaults() : etcd.watchReconnectBackoff();
    }
}
