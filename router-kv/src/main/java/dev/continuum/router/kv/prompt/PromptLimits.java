package dev.continuum.router.kv.prompt;

import java.time.Duration;

/**
 * Every bound of the prompt pipeline (docs/kv-prompt.md, "Bounds"). Exceeding a size bound (body, rendered
 * text, tokens) gives {@link PromptEncoding.Reason#PROMPT_TOO_LARGE}; running out of permits, deadline or a
 * render budget (nodes, heap) gives {@link PromptEncoding.Reason#RENDER_UNAVAILABLE}.
 *
 * @param renderPermits     renders (and tokenizations) running at once in each of the render pool's two lanes
 *                          (light, and heavy: a job about to tokenize long new text; {@code RenderPool})
 * @param permitWait        how long a request may wait for a render permit, queueing included
 * @param deadline          from {@code encode} to its token IDs; a render still running then is interrupted
 * @param renderBudget      template nodes one render may evaluate (the stand-in for an instruction budget)
 * @param renderHeapBytes   bytes one render may allocate (measured on its thread), bounding the heap a template
 *                          can fill with strings it builds and keeps
 * @param maxBodyBytes      the largest chat body parsed at all
 * @param maxJsonDepth      the deepest JSON nesting accepted in a body
 * @param maxRenderedBytes  the largest rendered prompt (UTF-8 bytes); also caps every string a template builds
 * @param maxTokens         the most token IDs one prompt may have
 * @param maxMacroDepth     the deepest recursive macro call
 * @param maxTokenizers     tokenizers kept loaded, by artifact key
 * @param concurrentLoads   tokenizers loading at once
 * @param maxArtifactBytes  the summed artifact bytes of the loaded tokenizers
 * @param loadRetry         how long a failed load stays failed before a request may try again
 */
public record PromptLimits(int renderPermits, Duration permitWait, Duration deadline, long renderBudget,
                           long renderHeapBytes,
                           int maxBodyBytes, int maxJsonDepth, int maxRenderedBytes, int maxTokens,
                           int maxMacroDepth, int maxTokenizers, int concurrentLoads, long maxArtifactBytes,
                           Duration loadRetry) {
    /** One render permit per core, at least 4 and at most 32. */
    public static final int MIN_PERMITS = 4;
    public static final int MAX_PERMITS = 32;

    public PromptLimits {
        positive("renderPermits", renderPermits);
        positive("permitWait", permitWait);
        positive("deadline", deadline);
        positive("renderBudget", renderBudget);
        positive("renderHeapBytes", renderHeapBytes);
        positive("maxBodyBytes", maxBodyBytes);
        positive("maxJsonDepth", maxJsonDepth);
        positive("maxRenderedBytes", maxRenderedBytes);
        positive("maxTokens", maxTokens);
        positive("maxMacroDepth", maxMacroDepth);
        positive("maxTokenizers", maxTokenizers);
        positive("concurrentLoads", concurrentLoads);
        positive("maxArtifactBytes", maxArtifactBytes);
        positive("loadRetry", loadRetry);
    }

    /**
     * The documented defaults: 4 to 32 permits (one per core), 20 ms permit wait, 2 s deadline, 5,000,000
     * template nodes, 64 MiB allocated per render, 8 MiB bodies, JSON nested 64 deep, 1 MiB rendered text, 1,048,576 tokens, macros 64 deep,
     * 16 tokenizers, 2 loads at once, 256 MiB of artifacts, a 5 minute retry.
     */
    public static PromptLimits defaults() {
        int permits = Math.max(MIN_PERMITS, Math.min(MAX_PERMITS, Runtime.getRuntime().availableProcessors()));
        return new PromptLimits(permits, Duration.ofMillis(20), Duration.ofSeconds(2), 5_000_000L,
                64L << 20, 8 << 20, 64, 1 << 20, 1 << 20, 64, 16, 2, 256L << 20, Duration.ofMinutes(5));
    }

    /** These limits with another deadline (tests, benchmarks). */
    public PromptLimits withDeadline(Duration newDeadline) {
        return new PromptLimits(renderPermits, permitWait, newDeadline, renderBudget, renderHeapBytes,
                maxBodyBytes, maxJsonDepth, maxRenderedBytes, maxTokens, maxMacroDepth, maxTokenizers, concurrentLoads, maxArtifactBytes,
                loadRetry);
    }

    private static void positive(String field, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException("PromptLimits." + field + ": " + value + " (expected: > 0)");
        }
    }

    private static void positive(String field, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException("PromptLimits." + field + ": " + value + " (expected: > 0)");
        }
    }
}
