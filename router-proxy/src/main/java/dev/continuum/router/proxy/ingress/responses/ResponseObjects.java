package dev.continuum.router.proxy.ingress.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter.InvalidResponse;

/** The Responses API's {@code response} object and its output items, built from chat completion pieces. */
final class ResponseObjects {
    private ResponseObjects() {
    }

    /** The longest upstream ID kept in the response's ID. */
    private static final int MAX_ID = 64;

    /**
     * {@code resp_} and the upstream's chat ID, kept to {@code [A-Za-z0-9_-]} and {@link #MAX_ID} characters: the
     * item IDs built from it are written into stream events without escaping.
     */
    static String responseId(String chatId) {
        StringBuilder sb = new StringBuilder(5 + Math.min(chatId.length(), MAX_ID)).append("resp_");
        int start = chatId.startsWith("resp_") ? 5 : 0;
        for (int i = start; i < chatId.length() && sb.length() < 5 + MAX_ID; i++) {
            char c = chatId.charAt(i);
            if (c < 128 && (Character.isLetterOrDigit(c) || c == '_' || c == '-')) {
                sb.append(c);
            }
        }
        return sb.length() == 5 ? "resp_continuum" : sb.toString();
    }

    /** The envelope with {@code status}; the caller adds {@code output} and {@code usage}. */
    static ObjectNode response(String id, long createdAt, String model, String status) {
        ObjectNode r = IngressJson.object();
        r.put("id", id);
        r.put("object", "response");
        r.put("created_at", createdAt);
        r.put("status", status);
        r.putNull("error");
        r.putNull("incomplete_details");
        r.put("model", model);
        r.putArray("output");
        r.put("parallel_tool_calls", true);
        r.put("tool_choice", "auto");
        r.putArray("tools");
        r.putNull("usage");
        return r;
    }

    /** Sets status {@code completed}, or {@code incomplete} with the reason when the chat was cut by length. */
    static void finish(ObjectNode response, String finishReason) {
        if (finishReason.equals("length")) {
            response.put("status", "incomplete");
            response.putObject("incomplete_details").put("reason", "max_output_tokens");
        } else if (finishReason.equals("content_filter")) {
            response.put("status", "incomplete");
            response.putObject("incomplete_details").put("reason", "content_filter");
        } else {
            response.put("status", "completed");
        }
    }

    static ObjectNode message(String id, String status, String text) {
        ObjectNode m = IngressJson.object();
        m.put("type", "message");
        m.put("id", id);
        m.put("status", status);
        m.put("role", "assistant");
        ArrayNode content = m.putArray("content");
        if (!status.equals("in_progress")) {
            content.add(textPart(text));
        }
        return m;
    }

    static ObjectNode textPart(String text) {
        ObjectNode p = IngressJson.object().put("type", "output_text").put("text", text);
        p.putArray("annotations");
        return p;
    }

    static ObjectNode functionCall(String id, String callId, String name, String arguments, String status) {
        return IngressJson.object().put("type", "function_call").put("id", id).put("call_id", callId)
                .put("name", name).put("arguments", arguments).put("status", status);
    }

    static ObjectNode usage(JsonNode chatUsage) {
        return usage(chatUsage.path("prompt_tokens").asLong(0), chatUsage.path("completion_tokens").asLong(0),
                chatUsage.path("prompt_tokens_details").path("cached_tokens").asLong(0),
                chatUsage.path("completion_tokens_details").path("reasoning_tokens").asLong(0));
    }

    static ObjectNode usage(long in, long out, long cached, long reasoning) {
        ObjectNode u = IngressJson.object();
        u.put("input_tokens", in);
        u.putObject("input_tokens_details").put("cached_tokens", cached);
        u.put("output_tokens", out);
        u.putObject("output_tokens_details").put("reasoning_tokens", reasoning);
        long total = in + out;
        u.put("total_tokens", total < 0 ? Long.MAX_VALUE : total);
        return u;
    }

    /** A complete chat completion as a {@code response}. */
    static ObjectNode fromChat(JsonNode chat) throws InvalidResponse {
        JsonNode choice = chat.path("choices").path(0);
        if (!choice.isObject()) {
            throw new InvalidResponse("no choice");
        }
        String id = responseId(chat.path("id").asText(""));
        ObjectNode r = response(id, chat.path("created").asLong(0), chat.path("model").asText(""), "completed");
        ArrayNode output = (ArrayNode) r.path("output");
        JsonNode message = choice.path("message");
        String text = IngressJson.text(message.path("content"));
        if (!text.isEmpty()) {
            output.add(message(itemId("msg", id, 0), "completed", text));
        }
        JsonNode calls = message.path("tool_calls");
        for (int i = 0; i < calls.size(); i++) {
            JsonNode c = calls.get(i);
            output.add(functionCall(itemId("fc", id, output.size()), c.path("id").asText("call_" + i),
                    c.path("function").path("name").asText(""), IngressJson.text(c.path("function").path("arguments")),
                    "completed"));
        }
        finish(r, choice.path("finish_reason").asText(""));
        r.set("usage", usage(chat.path("usage")));
        return r;
    }

    /** An output item's ID, unique within its response. */
    static String itemId(String prefix, String responseId, int outputIndex) {
        return prefix + "_" + responseId.substring(responseId.indexOf('_') + 1) + "_" + outputIndex;
    }
}
