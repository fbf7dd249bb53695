package dev.continuum.router.core.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * How {@code /v1/messages/count_tokens} counts a request's input tokens, given the request as the chat body it
 * would be sent as. {@link EstimatedTokens} is what the router has today; a counter backed by the model's own
 * tokenizer and chat template (router-kv's prompt encoder, once it renders prompts) replaces it through
 * {@link AnthropicIngress#routes(TokenCounter)}.
 */
@FunctionalInterface
public interface TokenCounter {
    /** The input tokens of {@code chatBody} (never negative); runs on an event loop: must not block. */
    long inputTokens(ObjectNode chatBody);
}
