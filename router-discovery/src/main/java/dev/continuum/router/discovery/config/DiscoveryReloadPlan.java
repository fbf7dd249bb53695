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
        return config.source() == DiscoverySourceKind.FILE ? !config.file().namespaces().isEmpty()
                : !config.etcd().namespaces().isEmpty();
    }
}
