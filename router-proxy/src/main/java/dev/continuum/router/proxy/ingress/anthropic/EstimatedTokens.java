package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.PromptTokens;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The documented estimate without a tokenizer: the load-only picker's heuristic ({@link PromptTokens}: the
 * larger of a token per four characters and a token per word) over every text of the converted messages, plus
 * the same over each tool's name, description and serialized schema. It ignores the chat template's own
 * tokens, so real counts run somewhat higher on short prompts.
 */
public final class EstimatedTokens implements TokenCounter {
    @Override
    public CompletionStage<Long> inputTokens(ObjectNode chatBody) {
        return CompletableFuture.completedFuture(estimate(chatBody));
    }

    /** The estimate, computed on the caller's thread (cheap: one walk of the converted body). */
    public long estimate(ObjectNode chatBody) {
        long n = 0;
        for (JsonNode m : chatBody.path("messages")) {
            n = add(n, m.path("content"));
            for (JsonNode call : m.path("tool_calls")) {
                n = add(n, call.path("function").path("name"));
                n = add(n, call.path("function").path("arguments"));
            }
        }
        for (JsonNode t : chatBody.path("tools")) {
            JsonNode fn = t.path("function");
            n = add(n, fn.path("name"));
            n = add(n, fn.path("description"));
            n = plus(n, estimate(fn.path("parameters").toString()));
        }
        return n;
    }

    private static long add(long n, JsonNode content) {
        if (content.isTextual()) {
            return plus(n, estimate(content.asText()));
        }
        long total = n;
        for (JsonNode part : content) {
            if (part.path("text").isTextual()) {
                total = plus(total, estimate(part.path("text").asText()));
            }
        }
        return total;
    }

    private static long estimate(String s) {
        char[] c = s.toCharArray();
        return PromptTokens.estimate(c, 0, c.length);
    }

    private static long plus(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }
}
