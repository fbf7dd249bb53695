package dev.continuum.router.discovery;

/**
 * What a worker does in a disaggregated fleet. {@link #UNKNOWN} workers are shown to operators and never
 * routed to (an unrecognized {@code worker_type} without a component claim).
 */
public enum WorkerRole {
    PREFILL("prefill"),
    DECODE("decode"),
    AGGREGATED("aggregated"),
    UNKNOWN("unknown");

    private final String wireName;

    WorkerRole(String wireName) {
        this.wireName = wireName;
    }

    /** The lowercase name used in the admin API and in metric labels. */
    public String wireName() {
        return wireName;
    }
}
