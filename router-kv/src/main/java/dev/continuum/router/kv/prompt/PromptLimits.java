// PLACEHOLDER: replaced by the prompt branch at merge
package dev.continuum.router.kv.prompt;

/** The encoder's bounds; the prompt branch defines the real components. */
public record PromptLimits(int maxRenderedBytes, int maxTokens) {
    public static PromptLimits defaults() {
        return new PromptLimits(1 << 20, 1_048_576);
    }
}
