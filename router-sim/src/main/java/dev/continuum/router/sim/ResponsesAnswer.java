package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * What the emulated frontend answers on {@code /v1/responses}, which Dynamo's frontend serves itself: a short text
 * response, as one {@code response} object or as the Responses event sequence of one message item
 * ({@code response.created}, the item and part added, {@code response.output_text.delta} per token, the text, part
 * and item done, {@code response.completed}), each event with its {@code sequence_number}. No tools.
 */
final class ResponsesAnswer {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String[] TOKENS = {"Hello ", "from ", "the ", "simulated ", "fleet."};

    private ResponsesAnswer() {
    }

    /** Whether {@code body} asks for a stream. */
    static boolean streamed(String body) {
        try {
            JsonNode n = JSON.readTree(body);
            return n != null && n.path("stream").asBoolean(false);
        } catch (IOException e) {
            return false;
        }
    }

    private static String response(String status, String text) {
        String output = text.isEmpty() ? "[]" : "[{\"type\":\"message\",\"id\":\"msg_sim\",\"status\":\"completed\","
                + "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"" + text
                + "\",\"annotations\":[]}]}]";
        return "{\"id\":\"resp_sim\",\"object\":\"response\",\"created_at\":1,\"model\":\"sim\",\"status\":\"" + status
                + "\",\"output\":" + output + ",\"usage\":{\"input_tokens\":4,\"output_tokens\":" + TOKENS.length
                + ",\"total_tokens\":" + (4 + TOKENS.length) + "}}";
    }

    /** The buffered answer. */
    static String buffered() {
        return response("completed", String.join("", TOKENS));
    }

    /** The whole event stream: one message item with one text part, a delta per token. */
    static String events() {
        String text = String.join("", TOKENS);
        String part = "{\"type\":\"output_text\",\"text\":\"%s\",\"annotations\":[]}";
        String item = "{\"type\":\"message\",\"id\":\"msg_sim\",\"status\":\"%s\",\"role\":\"assistant\",\"content\":%s}";
        String at = "\"item_id\":\"msg_sim\",\"output_index\":0,\"content_index\":0";
        StringBuilder sb = new StringBuilder();
        int seq = 0;
        sb.append(event("response.created", "\"response\":" + response("in_progress", ""), seq++));
        sb.append(event("response.output_item.added", "\"output_index\":0,\"item\":"
                + item.formatted("in_progress", "[]"), seq++));
        sb.append(event("response.content_part.added", at + ",\"part\":" + part.formatted(""), seq++));
        for (String t : TOKENS) {
            sb.append(event("response.output_text.delta", at + ",\"delta\":\"" + t + "\"", seq++));
        }
        sb.append(event("response.output_text.done", at + ",\"text\":\"" + text + "\"", seq++));
        sb.append(event("response.content_part.done", at + ",\"part\":" + part.formatted(text), seq++));
        sb.append(event("response.output_item.done", "\"output_index\":0,\"item\":"
                + item.formatted("completed", "[" + part.formatted(text) + "]"), seq++));
        sb.append(event("response.completed", "\"response\":" + buffered(), seq));
        return sb.toString();
    }

    private static String event(String type, String fields, int sequence) {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + fields + ",\"sequence_number\":" + sequence
                + "}\n\n";
    }
}
