package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter.InvalidResponse;

/** A complete chat completion as an Anthropic {@code message}. */
final class AnthropicResponses {
    private AnthropicResponses() {
    }

    static ObjectNode fromChat(JsonNode chat) throws InvalidResponse {
        JsonNode choice = chat.path("choices").path(0);
        if (!choice.isObject()) {
            throw new InvalidResponse("no choice");
        }
        JsonNode message = choice.path("message");
        ObjectNode out = IngressJson.object();
        out.put("id", messageId(chat.path("id").asText("")));
        out.put("type", "message");
        out.put("role", "assistant");
        out.put("model", chat.path("model").asText(""));
        ArrayNode content = out.putArray("content");
        String text = IngressJson.text(message.path("content"));
        if (!text.isEmpty()) {
            content.addObject().put("type", "text").put("text", text);
        }
        JsonNode calls = message.path("tool_calls");
        for (int i = 0; i < calls.size(); i++) {
            JsonNode call = calls.get(i);
            ObjectNode use = content.addObject().put("type", "tool_use");
            use.put("id", call.path("id").asText("toolu_" + i));
            use.put("name", call.path("function").path("name").asText(""));
            use.set("input", ToolInput.parse(IngressJson.text(call.path("function").path("arguments"))));
        }
        StopReasons.put(out, choice, calls.size() > 0);
        out.set("usage", usage(chat.path("usage")));
        return out;
    }

    static ObjectNode usage(JsonNode usage) {
        ObjectNode u = IngressJson.object();
        u.put("input_tokens", usage.path("prompt_tokens").asLong(0));
        u.put("output_tokens", usage.path("completion_tokens").asLong(0));
        JsonNode cached = usage.path("prompt_tokens_details").path("cached_tokens");
        if (cached.canConvertToLong()) {
            u.put("cache_read_input_tokens", cached.asLong());
        }
        return u;
    }

    /** Anthropic's IDs start {@code msg_}; the upstream's ID is kept after it. */
    static String messageId(String chatId) {
        return chatId.startsWith("msg_") ? chatId : "msg_" + (chatId.isEmpty() ? "continuum" : chatId);
    }
}
