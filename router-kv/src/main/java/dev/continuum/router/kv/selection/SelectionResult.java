package dev.continuum.router.kv.selection;

import java.util.Locale;

/**
 * How one request's backend was chosen, a closed set of metric labels: by the index ({@link #CACHED}, {@link
 * #UNCACHED}) or, for every other value, by {@code selection_strategy}, for that reason.
 */
public enum SelectionResult {
    /** The index chose, and the chosen backend holds part of the prompt. */
    CACHED,
    /** The index chose by load alone: no candidate holds any block of the prompt. */
    UNCACHED,
    /** The model is not listed in {@code selection.models}. */
    NO_MODEL,
    /** None of the request's candidates has a {@code dynamo.kv_cache_index} source. */
    NO_SOURCE,
    /** The model's tokenizer or template checksum is not in {@code dynamo.kv.pinned_artifacts}. */
    ARTIFACT_UNPINNED,
    /** The pinned files are not loaded (yet, or their fetch failed), or the tokenizer could not load. */
    TOKENIZER_UNAVAILABLE,
    /** The prompt is above the pipeline's bounds. */
    PROMPT_TOO_LARGE,
    /** The template could not render this body. */
    RENDER_UNAVAILABLE;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
