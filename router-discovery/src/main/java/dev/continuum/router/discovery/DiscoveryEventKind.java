package dev.continuum.router.discovery;

/**
 * The closed label set of {@code continuum_dynamo_discovery_events_total{kind}}: what happened to a record,
 * a pass or the watcher.
 */
public enum DiscoveryEventKind {
    /** A record was stored or replaced by a watch event. */
    PUT("put"),
    /** A record was removed by a watch event (a worker's lease expiring shows up here). */
    DELETE("delete"),
    /** A full resync (a pass's range gets) was applied. */
    RESYNC("resync"),
    /** A value that is not a record the router understands: not JSON, not an object, a missing ID. */
    MALFORMED("malformed"),
    /** A value above {@code MAX_RECORD_BYTES}, refused before parsing. */
    OVERSIZED("oversized"),
    /** An event channel the router cannot subscribe to (NATS, broker, non-tcp endpoints, unknown kinds). */
    UNSUPPORTED("unsupported"),
    /** Several keys claiming one identity; the whole set is refused. */
    DUPLICATE("duplicate"),
    /** A new key refused because its keyspace holds {@code MAX_RECORDS_PER_KEYSPACE} keys. */
    REFUSED("refused"),
    /**
     * A DynamoWorkerMetadata resource whose endpoint or card records carry an instance ID other than the
     * {@code hash_pod_name} of the resource's name: the whole resource is refused.
     */
    MISMATCH("mismatch"),
    /** A worker whose component and card claim different roles. */
    EXCLUDED("excluded"),
    /** The supervisor replaced the watcher after a configuration change. */
    RESTART("restart");

    private final String label;

    DiscoveryEventKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
