package dev.continuum.router.shim;

import org.jspecify.annotations.Nullable;

/**
 * Why a {@link PromptStage} gives the picker no prompt: the request takes the load-based decision, and the
 * KV-aware picker counts it under {@link #selectionResult()} in {@code continuum_dynamo_kv_selection_total}.
 */
public enum PromptFallback implements PromptStage.Answer, PromptOutcome {
    /** No tokenizer loaded yet, a load failed, or the model's workers disagree on their artifacts. */
    TOKENIZER_UNAVAILABLE(KvSelectionResult.TOKENIZER_UNAVAILABLE),
    /** An artifact the model's cards name is not pinned. */
    ARTIFACT_UNPINNED(KvSelectionResult.ARTIFACT_UNPINNED),
    /** The body, the rendered text or its token count is over its bound. */
    PROMPT_TOO_LARGE(KvSelectionResult.PROMPT_TOO_LARGE),
    /** The template failed, ran out of budget or deadline, or no render permit came in time. */
    RENDER_UNAVAILABLE(KvSelectionResult.RENDER_UNAVAILABLE),
    /**
     * Not encoded for a reason the stage does not label (a body admission accepted but the stage could not
     * rewrite): the picker hears no reason and counts it as {@code tokenizer_unavailable}, its default.
     */
    UNLABELLED(null);

    private final @Nullable KvSelectionResult result;

    PromptFallback(@Nullable KvSelectionResult result) {
        this.result = result;
    }

    /** The picker's label for this fallback, or null for {@link #UNLABELLED}. */
    public @Nullable KvSelectionResult selectionResult() {
        return result;
    }
}
