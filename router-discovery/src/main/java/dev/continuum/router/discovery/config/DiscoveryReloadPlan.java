package dev.continuum.router.discovery.config;

import dev.continuum.router.discovery.DiscoverySourceKind;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a configuration change does to discovery: a pure function of the old and new settings, so every
 * rule is a table test.
 *
 * @param action what happens to the watcher and the registry
 * @param reason the restart reason, null when nothing restarts (or discovery stops)
 */
public record DiscoveryReloadPlan(Action action, @Nullable RestartReason reason) {
    /** From cheapest to dearest. */
    public enum Action {
        /** Nothing running changes (the new settings are remembered). */
        NOTHING,
        /** Discovery turns off: the watcher stops and the registry reads as disabled. */
        STOP,
        /** A new watcher; the current snapshot stays readable until its first resync. */
        REPLACE_KEEPING_SNAPSHOT,
        /** A new watcher; workers and publishers of removed namespaces are pruned at once. */
        REPLACE_PRUNING,
        /** A new watcher from an empty registry. */
        REPLACE_RESETTING
    }

    public static final DiscoveryReloadPlan NOTHING = new DiscoveryReloadPlan(Action.NOTHING, null);
    public static final DiscoveryReloadPlan STOP = new DiscoveryReloadPlan(Action.STOP, null);

    public static DiscoveryReloadPlan of(boolean wasEnabled, DiscoveryConfig before, boolean enabled, DiscoveryConfig after) {
        if (!enabled) {
            return wasEnabled ? STOP : NOTHING;
        }
        if (!wasEnabled) {
            return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.ENABLED);
        }
        if (before.source() != after.source()) {
            return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.SOURCE);
        }
        if (after.kubernetesSource()) {
            return kubernetesPlan(before, after);
        }
        boolean connection;
        boolean other;
        if (after.source() == DiscoverySourceKind.FILE) {
            FileStoreConfig b = before.file();
            FileStoreConfig a = after.file();
            connection = !b.root().equals(a.root());
            other = !b.ttl().equals(a.ttl()) || !b.rescanInterval().equals(a.rescanInterval());
        } else {
            EtcdConfig b = before.etcd();
            EtcdConfig a = after.etcd();
            connection = !b.endpoints().equals(a.endpoints()) || !Objects.equals(b.tls(), a.tls())
                    || !Objects.equals(b.auth(), a.auth());
            other = false;
        }
        if (connection) {
            return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.CONNECTION);
        }
        DiscoveryReloadPlan namespaces = namespacesPlan(before, after);
        if (namespaces != null) {
            return namespaces;
        }
        if (!before.backoff().equals(after.backoff())) {
            return new DiscoveryReloadPlan(Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.BACKOFF);
        }
        if (other) {
            return new DiscoveryReloadPlan(Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.OTHER);
        }
        return NOTHING;
    }

    /**
     * Kubernetes rules (docs/discovery.md): the Kubernetes namespace or a scalar {@code dynamo_namespace} edit resets
     * ({@code namespace}); a {@code model}/{@code models} edit that changes what a kept namespace's Pods serve
     * resets ({@code other}); a {@code dynamo_namespaces} edit otherwise prunes ({@code namespaces}). Under
     * {@code source: kubernetes} the models are never bound, so editing them changes nothing.
     */
    private static DiscoveryReloadPlan kubernetesPlan(DiscoveryConfig before, DiscoveryConfig after) {
        KubernetesConfig b = before.kubernetes();
        KubernetesConfig a = after.kubernetes();
        if (!b.namespace().equals(a.namespace())) {
            return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.NAMESPACE);
        }
        DiscoveryReloadPlan namespaces = namespacesPlan(before, after);
        if (namespaces != null && namespaces.action() == Action.REPLACE_RESETTING) {
            return namespaces;
        }
        Set<String> kept = new HashSet<>(b.effectiveDynamoNamespaces());
        kept.retainAll(a.effectiveDynamoNamespaces());
        if (after.source() == DiscoverySourceKind.KUBERNETES) {
            // Models come from the cards there; the section binder drops model/models, and so does the plan
            // for configs built in code.
            kept.clear();
        }
        for (String ns : kept) {
            if (!modelsOf(b, ns).equals(modelsOf(a, ns))) {
                return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.OTHER);
            }
        }
        if (namespaces != null) {
            return namespaces;
        }
        if (!b.watchReconnectBackoff().equals(a.watchReconnectBackoff())) {
            return new DiscoveryReloadPlan(Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.BACKOFF);
        }
        return NOTHING;
    }

    /** What decides the models of one Dynamo namespace's Pods: the single model, or its applicable mappings. */
    private static List<Object> modelsOf(KubernetesConfig config, String dynamoNamespace) {
        List<Object> applicable = new java.util.ArrayList<>();
        applicable.add(Objects.requireNonNullElse(config.model(), ""));
        for (KubernetesConfig.ModelMapping m : config.models()) {
            if (m.dynamoNamespace() == null || m.dynamoNamespace().equals(dynamoNamespace)) {
                applicable.add(m.component() + "=" + m.model());
            }
        }
        return applicable;
    }

    /**
     * A scalar {@code namespace} edit resets; a {@code namespaces} list edit that keeps some namespaces prunes
     * the removed ones and keeps the rest routable.
     */
    private static @Nullable DiscoveryReloadPlan namespacesPlan(DiscoveryConfig before, DiscoveryConfig after) {
        List<String> was = before.namespaces();
        List<String> now = after.namespaces();
        if (was.equals(now)) {
            return null;
        }
        boolean listForm = usesList(before) || usesList(after);
        Set<String> kept = new HashSet<>(was);
        kept.retainAll(now);
        if (!listForm || kept.isEmpty()) {
            return new DiscoveryReloadPlan(Action.REPLACE_RESETTING, RestartReason.NAMESPACE);
        }
        return new DiscoveryReloadPlan(Action.REPLACE_PRUNING, RestartReason.NAMESPACES);
    }

    private static boolean usesList(DiscoveryConfig config) {
        return switch (config.source()) {
            case FILE -> !config.file().namespaces().isEmpty();
            case ETCD -> !config.etcd().namespaces().isEmpty();
            case KUBERNETES, KUBERNETES_PODS -> !config.kubernetes().dynamoNamespaces().isEmpty();
        };
    }
}
