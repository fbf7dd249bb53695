package dev.continuum.router.shim;

/** {@code x-continuum-routing-path} values and the {@code routing_path} label of {@code disaggregated_requests_total}. */
enum RoutingPath {
    PREFILL_THEN_DECODE("prefill_then_decode"),
    /** Aggregated (or decode-only) pin, or no pin at all. */
    UNIFIED("unified"),
    FALLBACK("fallback");

    private final String label;

    RoutingPath(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }
}
