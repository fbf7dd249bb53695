package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A chat choice's {@code finish_reason} as Anthropic's {@code stop_reason}, with the matched stop sequence when
 * the engine names it (vLLM, and so Dynamo's workers, put the matched string in the choice's
 * {@code stop_reason}; a token ID there is an end-of-sequence token, not a stop sequence).
 */
final class StopReasons {
    static final String STOP_SEQUENCE = "stop_sequence";

    private StopReasons() {
    }

    /** Sets {@code stop_reason} and {@code stop_sequence} on {@code target} for {@code choice}. */
    static void put(ObjectNode target, JsonNode choice, boolean sawToolCall) {
        JsonNode matched = choice.path("stop_reason");
        String reason = reason(choice.path("finish_reason").asText(""), matched.isTextual(), sawToolCall);
        target.put("stop_reason", reason);
        if (reason.equals(STOP_SEQUENCE)) {
            target.put("stop_sequence", matched.asText());
        } else {
            target.putNull("stop_sequence");
        }
    }

    /**
     * The {@code stop_reason} for a chat {@code finish}; {@value #STOP_SEQUENCE} (then {@code stop_sequence} is the
     * matched string) only when {@code matched}, the choice named the stop string it matched.
     */
    static String reason(String finish, boolean matched, boolean sawToolCall) {
        return switch (finish) {
            case "length" -> "max_tokens";
            case "tool_calls", "function_call" -> "tool_use";
            case "content_filter" -> "refusal";
            default -> sawToolCall ? "tool_use" : matched ? STOP_SEQUENCE : "end_turn";
        };
    }
}
