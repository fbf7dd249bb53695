package dev.continuum.router.discovery;

import java.util.List;

/**
 * The writing side of the registry, owned by the discovery supervisor. Every write goes through a
 * {@link Writer} handed to one watcher at a time: reconfiguring revokes the previous writer, so a watcher
 * that is still shutting down can never overwrite its replacement's view.
 */
public interface MutableDynamoRegistry extends DynamoRegistry {
    /** A registry whose discovery is off, at generation 0. */
    static MutableDynamoRegistry create() {
        return new AtomicDynamoRegistry();
    }

    /**
     * Installs a new discovery configuration with {@code fleet} as its view (empty for a reset, the kept part
     * of the current view for a prune or a backoff-only change), revokes the current writer and returns the
     * next one. The generation is bumped when anything but the connection state changed.
     */
    Writer reconfigure(boolean enabled, DiscoverySourceKind source, List<String> namespaces, FleetView fleet);

    /** Publishing rights of one watcher. */
    interface Writer {
        /**
         * Swaps in {@code fleet}; returns whether the generation was bumped (false when the view is unchanged
         * or this writer was revoked).
         */
        boolean publish(FleetView fleet);

        /** Swaps in a snapshot with the new connection state; never bumps the generation. */
        void setConnected(boolean connected);

        /** False once the supervisor has handed the registry to another watcher. */
        boolean isCurrent();
    }
}
