package dev.continuum.router.discovery;

import java.util.Optional;

/** Where the fleet is read from ({@code dynamo.discovery.source}). */
public enum DiscoverySourceKind {
    ETCD("etcd", new Signals(true, true)),
    /** Dynamo's file store, for single-node fleets. */
    FILE("file", new Signals(true, true)),
    /** Reserved for the Kubernetes metadata source (DynamoWorkerMetadata + EndpointSlices). */
    KUBERNETES("kubernetes", new Signals(true, true)),
    /** Reserved for the Kubernetes Pod source: Pods carry no cards or channels. */
    KUBERNETES_PODS("kubernetes_pods", new Signals(false, false));

    private final String configName;
    private final Signals signals;

    DiscoverySourceKind(String configName, Signals signals) {
        this.configName = configName;
        this.signals = signals;
    }

    /** The spelling in configuration and in the admin API. */
    public String configName() {
        return configName;
    }

    /** Which signals workers found by this source can carry. */
    public Signals signals() {
        return signals;
    }

    public static Optional<DiscoverySourceKind> fromConfigName(String name) {
        for (DiscoverySourceKind kind : values()) {
            if (kind.configName.equals(name)) {
                return Optional.of(kind);
            }
        }
        return Optional.empty();
    }
}
