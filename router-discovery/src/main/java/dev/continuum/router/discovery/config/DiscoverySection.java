package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.discovery.DiscoverySourceKind;
import java.util.Map;

/**
 * {@code dynamo.discovery}: binds and validates the section in one pass, reporting every problem with its
 * dotted path, and tells the reload planner how a change takes effect. Each source's block has its binder
 * ({@link EtcdBinder}, {@link FileStoreBinder}, {@link KubernetesBinder}); they share the namespace rule of
 * {@link NamespaceList}. Register it with the config loader:
 * {@code ConfigLoader.builder().environment(env).dynamoSection(DiscoverySection.create(env))}, then read the
 * value with {@code config.dynamo().section(section)}.
 */
public final class DiscoverySection implements DynamoSection<DiscoveryConfig> {
    /** MAX_DYNAMO_NAMESPACES: namespaces one router may watch. */
    public static final int MAX_DYNAMO_NAMESPACES = 16;
    public static final int MAX_ENDPOINTS = 16;
    static final String SOURCES = "etcd, file, kubernetes or kubernetes_pods";

    private final Map<String, String> environment;

    private DiscoverySection(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    /** @param environment where the file store's default root ({@code DYN_FILE_KV}) is read */
    public static DiscoverySection create(Map<String, String> environment) {
        return new DiscoverySection(environment);
    }

    @Override
    public String key() {
        return "discovery";
    }

    @Override
    public Class<DiscoveryConfig> type() {
        return DiscoveryConfig.class;
    }

    @Override
    public DiscoveryConfig defaults() {
        return new DiscoveryConfig(DiscoverySourceKind.ETCD, EtcdConfig.defaults(), FileStoreConfig.defaults(environment));
    }

    @Override
    public DiscoveryConfig bind(ConfigNode node, Problems problems) {
        if (node.isPresent() && node.kind() != ConfigNode.Kind.MAP) {
            node.invalid("a map with source, etcd and file");
            return defaults();
        }
        ConfigNode sourceNode = node.get("source");
        DiscoverySourceKind source = sourceNode.asChoice(DiscoverySourceKind.ETCD,
                DiscoverySourceKind::fromConfigNameOrNull, SOURCES);
        if (source == DiscoverySourceKind.KUBERNETES_PODS) {
            sourceNode.warning("Pods carry no model cards or load: no capacity, dp_rank or kv_metrics signals, "
                    + "workers are picked round-robin (prefer source: kubernetes where RBAC allows)");
        }
        EtcdConfig etcd = EtcdBinder.bind(node.get("etcd"));
        FileStoreConfig file = FileStoreBinder.bind(node.get("file"), FileStoreConfig.defaults(environment));
        KubernetesConfig kubernetes = KubernetesBinder.bind(node.get("kubernetes"), source);
        return new DiscoveryConfig(source, etcd, file, kubernetes);
    }

    @Override
    public void crossCheck(DiscoveryConfig value, RouterConfig config, Problems problems) {
        if (config.dynamo().enabled() && value.source() == DiscoverySourceKind.ETCD && value.etcd().endpoints().isEmpty()) {
            problems.error("dynamo.discovery.etcd.endpoints",
                    "[] (expected: at least one endpoint when dynamo.enabled is true)");
        }
    }

    /**
     * Nothing restarts when only the inactive source's settings changed; anything else replaces the watcher
     * (how far is decided by {@link DiscoveryReloadPlan} at runtime, without a process restart).
     */
    @Override
    public ReloadClass reloadClass(DiscoveryConfig before, DiscoveryConfig after) {
        return DiscoveryReloadPlan.of(true, before, true, after).action() == DiscoveryReloadPlan.Action.NOTHING
                ? ReloadClass.IMMEDIATE : ReloadClass.RESTART_SUBSYSTEM;
    }
}
