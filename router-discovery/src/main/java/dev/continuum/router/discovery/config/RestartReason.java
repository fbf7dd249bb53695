package dev.continuum.router.discovery.config;

/** Why the supervisor replaced the watcher; logged at info with {@code kind="restart"} counted. */
public enum RestartReason {
    /** Discovery was switched on. */
    ENABLED("enabled"),
    /** {@code dynamo.discovery.source} changed: the registry is emptied. */
    SOURCE("source"),
    /** The watched namespace changed: the registry is emptied. */
    NAMESPACE("namespace"),
    /** The namespace list changed with some namespaces kept: only removed namespaces are pruned. */
    NAMESPACES("namespaces"),
    /** Endpoints, TLS, auth or the file store root changed: the registry is emptied. */
    CONNECTION("connection"),
    /** Only {@code watch_reconnect_backoff} changed: the current snapshot stays until the first resync. */
    BACKOFF("backoff"),
    /** Another setting of the source changed (file store TTL or rescan interval): the snapshot stays. */
    OTHER("other");

    private final String label;

    RestartReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
