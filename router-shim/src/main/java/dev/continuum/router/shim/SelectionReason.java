package dev.continuum.router.shim;

/**
 * Why a worker was (or, for {@link #NO_PREFILL_POOL}, was not) chosen: the closed {@code reason} label set of
 * {@code continuum_dynamo_selection_total{role,reason}} (see {@code docs/metrics.md}).
 */
public enum SelectionReason {
    /** The lowest defined cost won (at least one candidate had a fresh sample carrying the phase's field). */
    LOAD("load"),
    /** No candidate had a fresh sample carrying the phase's field: the per-phase cursor rotated over all. */
    ROUND_ROBIN_STALE("round_robin_stale"),
    /** The discovery source provides no load signal at all (kubernetes_pods): the cursor rotated over all. */
    ROUND_ROBIN_NO_SIGNAL("round_robin_no_signal"),
    /** No prefill worker was pinned: the decode winner is aggregated, or its namespace has no prefill worker. */
    NO_PREFILL_POOL("no_prefill_pool"),
    /** Chosen by the KV-aware picker (the KV issue). */
    KV_AWARE("kv_aware"),
    /** The KV-aware picker let the decode worker prefill locally (conditional disaggregation). */
    CONDITIONAL_BYPASS("conditional_bypass"),
    /** The request's session is bound to this decode rank, which is still a candidate and not stalled. */
    SESSION("session");

    private final String label;

    SelectionReason(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }
}
