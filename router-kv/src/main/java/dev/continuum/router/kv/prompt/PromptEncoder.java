package dev.continuum.router.kv.prompt;

import dev.continuum.router.core.lifecycle.Lifecycle;
import java.util.concurrent.CompletableFuture;

/**
 * Renders a chat-completion body with the model's chat template and tokenizes the result. The work runs on
 * the encoder's own bounded pools, never on the caller's thread (callers are event loops), and the future
 * never completes exceptionally: every failure is a {@link PromptEncoding.Fallback}.
 */
public interface PromptEncoder extends Lifecycle {

    /**
     * @param artifacts the model's verified artifacts
     * @param chatBody  the final chat-completion JSON body the shim will receive (global prompts applied)
     */
    CompletableFuture<PromptEncoding> encode(PromptArtifacts artifacts, byte[] chatBody);

    /**
     * Starts loading {@code artifacts}' tokenizer and templates in the background if they are not loaded, so the
     * model's first request does not fall back; never waits. Returns whether they are loaded now.
     */
    default boolean prepare(PromptArtifacts artifacts) {
        return true;
    }

    /**
     * Applies {@code dynamo.kv.segment_cache_bytes}: the bound of the token-ID cache shared by every model
     * (docs/kv-prompt.md, "Caches"). An encoder without such a cache (test doubles) has nothing to bound.
     */
    default void segmentCacheBytes(long maxBytes) {
    }

    /**
     * Applies {@code dynamo.kv.render_cache_bytes}: the bound of the cache of rendered conversation prefixes
     * (docs/kv-prompt.md, "Caches"). An encoder without one has nothing to bound.
     */
    default void renderCacheBytes(long maxBytes) {
    }
}
