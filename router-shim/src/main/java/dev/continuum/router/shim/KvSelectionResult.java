package dev.continuum.router.shim;

/**
 * What the KV-aware picker made of one request: the closed {@code result} label set of
 * {@code continuum_dynamo_kv_selection_total} (see {@code docs/kv-routing.md}). Exactly one per selection.
 */
public enum KvSelectionResult {
    /** The KV formula scored the request and the winner already held at least one of its blocks. */
    OVERLAP("overlap"),
    /** The KV formula scored the request, but the winner held none of its blocks (or the fleet publishes no kv-events). */
    NO_OVERLAP("no_overlap"),
    /** No tokenizer for the model (not loaded yet, failed, or the workers disagree): the load-based decision. */
    TOKENIZER_UNAVAILABLE("tokenizer_unavailable"),
    /** The body, the rendered prompt or its token count was over its bound: the load-based decision. */
    PROMPT_TOO_LARGE("prompt_too_large"),
    /** The chat template failed or ran out of budget, deadline or permits: the load-based decision. */
    RENDER_UNAVAILABLE("render_unavailable"),
    /** An artifact the model's cards name is not pinned: the load-based decision. */
    ARTIFACT_UNPINNED("artifact_unpinned"),
    /** Conditional disaggregation let the decode worker prefill the request itself. */
    BYPASS("bypass");

    private final String label;

    KvSelectionResult(String label) {
        this.label = label;
    }

    /** The metric label value. */
    public String label() {
        return label;
    }
}
