package dev.continuum.router.core.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A chat choice's {@code finish_reason} as Anthropic's {@code stop_reason}, with the matched stop sequence when
 * the engine names it (vLLM, and so Dynamo's workers, put the matched string in the choice's
 * {@code stop_reason}; a token ID there is an end-of-sequence token, not a stop sequence).
 */
final class StopReasons {
    private StopReasons() {
    }

    /** Sets {@code stop_reason} and {@code stop_sequence} on {@code target} for {@code choice}. */
    static void put(ObjectNode target, JsonNode choice, boolean sawToolCall) {
        String finish = choice.path("finish_reason").asText("");
        JsonNode matched = choice.path("stop_reason");
        String reason = switch (finish) {
            case "length" -> "max_tokens";
            case "tool_calls", "function_call" -> "tool_use";
            case "content_filter" -> "refusal";
            default -> sawToolCall ? "tool_use" : matched.isTextual() ? "stop_sequence" : "end_turn";
        };
        target.put("stop_reason", reason);
        if (reason.equals("stop_sequence")) {
            target.put("stop_sequence", matched.asText());
        } else {
            target.putNull("stop_sequence");
        }
    }
}
