package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.CompletionStage;

/**
 * How {@code /v1/messages/count_tokens} counts a request's input tokens, given the request as the chat body it
 * would be sent as. {@link EstimatedTokens} counts without a tokenizer; a counter backed by the model's own
 * tokenizer and chat template (router-kv's prompt encoder) is plugged in through
 * {@link AnthropicIngress#routes(TokenCounter)}.
 */
@FunctionalInterface
public interface TokenCounter {
    /**
     * The input tokens of {@code chatBody} (never negative), now or later. Called on an event loop: it must not
     * block (tokenizing belongs on another thread), and must not keep {@code chatBody} past completion. A stage
     * that fails is answered with the estimate.
     */
    CompletionStage<Long> inputTokens(ObjectNode chatBody);
}
