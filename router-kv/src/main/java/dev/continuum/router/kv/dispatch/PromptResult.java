package dev.continuum.router.kv.dispatch;

/** The closed label set of {@code continuum_dynamo_kv_prompts_total{result}}: what the KV step did per request. */
public enum PromptResult {
    /** Rendered, tokenized and block-hashed. */
    ENCODED("encoded"),
    /** A checksum the model's cards name is not pinned. */
    ARTIFACT_UNPINNED("artifact_unpinned"),
    /** The model's workers disagree on their artifacts, or they are not loaded (yet). */
    TOKENIZER_UNAVAILABLE("tokenizer_unavailable"),
    /** The body, the rendered text or the token count was over its bound. */
    PROMPT_TOO_LARGE("prompt_too_large"),
    /** The template failed or ran out of its budget, deadline or permits. */
    RENDER_UNAVAILABLE("render_unavailable");

    private final String label;

    PromptResult(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
