// PLACEHOLDER: replaced by the prompt branch at merge
package dev.continuum.router.kv.prompt;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import java.util.concurrent.CompletableFuture;

/** Stands in for the prompt branch's encoder so the wiring compiles: it never encodes. */
public final class HuggingFacePromptEncoder extends StartStopSupport implements PromptEncoder {
    private static final CompletableFuture<PromptEncoding> UNAVAILABLE = CompletableFuture.completedFuture(
            new PromptEncoding.Fallback(PromptEncoding.Reason.TOKENIZER_UNAVAILABLE));

    public HuggingFacePromptEncoder(PromptLimits limits) {
    }

    @Override
    public CompletableFuture<PromptEncoding> encode(PromptArtifacts artifacts, byte[] chatBody) {
        return UNAVAILABLE;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        return CompletableFuture.completedFuture(null);
    }
}
