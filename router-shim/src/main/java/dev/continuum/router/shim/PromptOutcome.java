package dev.continuum.router.shim;

/** What a {@link PromptStage} made of one request's prompt: its blocks, or why there are none. */
public sealed interface PromptOutcome permits PromptBlocks, PromptFallback {
}
