package dev.continuum.router.proxy;

import dev.continuum.router.proxy.prompts.ChatRewrite;

/**
 * Which rewrite the copy of a chat body sent to each backend gets ({@code global_prompts},
 * {@code requires_single_leading_system}): what a dispatch hook that renders the prompt needs to render the body a
 * backend will actually receive.
 */
@FunctionalInterface
public interface ChatRewrites {
    /** Every backend gets the body as it is. */
    ChatRewrites NONE = backend -> ChatRewrite.NONE;

    /** The rewrite of the body sent to the backend named {@code backend} ({@link ChatRewrite#NONE} if unknown). */
    ChatRewrite forBackend(String backend);
}
