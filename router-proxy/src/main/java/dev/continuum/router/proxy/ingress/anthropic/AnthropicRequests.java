package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.ingress.RequestFields;
import dev.continuum.router.proxy.ingress.ToolDefinitions;
import dev.continuum.router.proxy.IngressConverter.InvalidRequest;
import java.util.Map;

/**
 * An Anthropic Messages request as a chat-completion body, field by field (docs/ingresses.md has the
 * table). The chat body is built new, so nothing the client sent reaches the upstream unless converted
 * here: no {@code nvext}, no unknown field. Blocks the chat wire cannot carry are refused with the field's
 * path; fields that only tune Anthropic's own service are dropped.
 */
final class AnthropicRequests {
    /** Anthropic's tool choice types and their chat spelling (a named tool is converted separately). */
    /** Custom tools only: server tools run on Anthropic's side, Anthropic-defined tools bring no schema. */
    private static final ToolDefinitions TOOLS = new ToolDefinitions("custom", "custom", "input_schema", true,
            "this router offers the model custom tools only; server tools (web_search, web_fetch, code_execution, ...)"
                    + " are run by Anthropic's API and Anthropic-defined tools (bash, text_editor, computer) carry no"
                    + " schema, and this router runs none of them.");
    private static final Map<String, String> TOOL_CHOICE = Map.of("auto", "auto", "any", "required", "none", "none");

    private AnthropicRequests() {
    }

    /**
     * @param counting a count_tokens request: {@code max_tokens} is not required and the result is not sent
     */
    static ObjectNode toChat(ObjectNode in, boolean counting) throws InvalidRequest {
        ObjectNode out = IngressJson.object();
        JsonNode model = in.path("model");
        if (!model.isTextual() || model.asText().isEmpty()) {
            throw new InvalidRequest("model: Field required (a non-empty string).");
        }
        out.put("model", model.asText());
        ArrayNode messages = out.putArray("messages");
        system(in.path("system"), messages);
        JsonNode msgs = in.path("messages");
        if (!msgs.isArray() || msgs.isEmpty()) {
            throw new InvalidRequest("messages: Field required (a non-empty array).");
        }
        for (int i = 0; i < msgs.size(); i++) {
            message(RequestFields.object(msgs.get(i), "messages." + i), "messages." + i, messages);
        }
        JsonNode maxTokens = in.path("max_tokens");
        if (maxTokens.isIntegralNumber() && maxTokens.canConvertToLong() && maxTokens.asLong() > 0) {
            out.put("max_tokens", maxTokens.asLong());
        } else if (!counting || RequestFields.given(maxTokens)) {
            // count_tokens needs none, but one given must still be a valid one.
            throw new InvalidRequest("max_tokens: Field required (a positive integer).");
        }
        number(in, "temperature", out, "temperature");
        number(in, "top_p", out, "top_p");
        JsonNode topK = in.path("top_k");
        if (topK.isIntegralNumber()) {
            out.put("top_k", topK.asLong());
        } else if (!topK.isMissingNode() && !topK.isNull()) {
            throw new InvalidRequest("top_k: expected an integer.");
        }
        ArrayNode stop = RequestFields.optionalArray(in, "stop_sequences", "");
        if (stop != null && !stop.isEmpty()) {
            ArrayNode s = out.putArray("stop");
            for (int i = 0; i < stop.size(); i++) {
                if (!stop.get(i).isTextual()) {
                    throw new InvalidRequest("stop_sequences." + i + ": expected a string.");
                }
                s.add(stop.get(i).asText());
            }
        }
        ObjectNode metadata = RequestFields.optionalObject(in, "metadata", "");
        String user = metadata == null ? null : RequestFields.optionalText(metadata, "user_id", "metadata");
        if (user != null) {
            out.put("user", user);
        }
        tools(in, out);
        boolean stream = RequestFields.optionalBoolean(in, "stream", "", false);
        out.put("stream", stream);
        if (stream) {
            // Usage arrives in a last chunk only when asked for; message_delta carries it.
            out.putObject("stream_options").put("include_usage", true);
        }
        return out;
    }

    private static void number(JsonNode in, String field, ObjectNode out, String as) throws InvalidRequest {
        JsonNode n = in.path(field);
        if (n.isNumber()) {
            out.set(as, n);
        } else if (!n.isMissingNode() && !n.isNull()) {
            throw new InvalidRequest(field + ": expected a number.");
        }
    }

    private static void system(JsonNode system, ArrayNode messages) throws InvalidRequest {
        if (system.isMissingNode() || system.isNull()) {
            return;
        }
        String text;
        if (system.isTextual()) {
            text = system.asText();
        } else if (system.isArray()) {
            // Text blocks joined as one system message (cache_control has no chat counterpart).
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < system.size(); i++) {
                JsonNode b = system.get(i);
                if (!"text".equals(b.path("type").asText()) || !b.path("text").isTextual()) {
                    throw new InvalidRequest("system." + i + ": expected a text block.");
                }
                if (sb.length() > 0) {
                    sb.append('\n');
                }
                sb.append(b.path("text").asText());
            }
            text = sb.toString();
        } else {
            throw new InvalidRequest("system: expected a string or an array of text blocks.");
        }
        if (!text.isEmpty()) {
            messages.addObject().put("role", "system").put("content", text);
        }
    }

    private static void message(JsonNode m, String path, ArrayNode messages) throws InvalidRequest {
        String role = m.path("role").asText();
        if (!role.equals("user") && !role.equals("assistant")) {
            throw new InvalidRequest(path + ".role: expected 'user' or 'assistant'.");
        }
        JsonNode content = m.path("content");
        if (content.isTextual()) {
            messages.addObject().put("role", role).put("content", content.asText());
            return;
        }
        if (!content.isArray()) {
            throw new InvalidRequest(path + ".content: expected a string or an array of content blocks.");
        }
        if (role.equals("assistant")) {
            assistant(content, path, messages);
        } else {
            user(content, path, messages);
        }
    }

    /** Text blocks joined; tool_use blocks become tool_calls; thinking blocks are dropped. */
    private static void assistant(JsonNode blocks, String path, ArrayNode messages) throws InvalidRequest {
        StringBuilder text = new StringBuilder();
        ArrayNode calls = null;
        for (int i = 0; i < blocks.size(); i++) {
            String p = path + ".content." + i;
            JsonNode b = RequestFields.object(blocks.get(i), p);
            String type = b.path("type").asText();
            switch (type) {
                case "text" -> text.append(RequestFields.text(b.path("text"), p + ".text"));
                case "tool_use" -> {
                    if (calls == null) {
                        calls = IngressJson.object().putArray("tool_calls");
                    }
                    ObjectNode call = calls.addObject();
                    call.put("id", IngressJson.requiredText(b, "id", path + ".content." + i));
                    call.put("type", "function");
                    ObjectNode fn = call.putObject("function");
                    fn.put("name", IngressJson.requiredText(b, "name", path + ".content." + i));
                    ObjectNode input = RequestFields.optionalObject(b, "input", p);
                    fn.put("arguments", input == null ? "{}" : input.toString());
                }
                case "thinking", "redacted_thinking" -> {
                    // The chat wire has no place for them; the model re-reasons.
                }
                default -> throw new InvalidRequest(path + ".content." + i + ".type: '" + IngressJson.clip(type)
                        + "' is not supported in an assistant message.");
            }
        }
        ObjectNode msg = messages.addObject().put("role", "assistant");
        if (text.length() > 0 || calls == null) {
            msg.put("content", text.toString());
        } else {
            msg.putNull("content");
        }
        if (calls != null) {
            msg.set("tool_calls", calls);
        }
    }

    /**
     * tool_result blocks become tool messages (first: they answer the previous turn's calls); text and image
     * blocks stay a user message of content parts.
     */
    private static void user(JsonNode blocks, String path, ArrayNode messages) throws InvalidRequest {
        ArrayNode parts = null;
        for (int i = 0; i < blocks.size(); i++) {
            String p = path + ".content." + i;
            JsonNode b = RequestFields.object(blocks.get(i), p);
            String type = b.path("type").asText();
            switch (type) {
                case "text" -> {
                    if (parts == null) {
                        parts = IngressJson.object().putArray("content");
                    }
                    parts.addObject().put("type", "text").put("text", RequestFields.text(b.path("text"), p + ".text"));
                }
                case "image" -> {
                    if (parts == null) {
                        parts = IngressJson.object().putArray("content");
                    }
                    parts.addObject().put("type", "image_url").putObject("image_url").put("url", imageUrl(b, p));
                }
                case "tool_result" -> {
                    ObjectNode tool = messages.addObject().put("role", "tool");
                    tool.put("tool_call_id", IngressJson.requiredText(b, "tool_use_id", p));
                    String result = toolResult(b.path("content"), p + ".content");
                    tool.put("content", RequestFields.optionalBoolean(b, "is_error", p, false) && !result.startsWith("Error")
                            ? "Error: " + result : result);
                }
                default -> throw new InvalidRequest(p + ".type: '" + IngressJson.clip(type)
                        + "' is not supported in a user message.");
            }
        }
        if (parts != null) {
            messages.addObject().put("role", "user").set("content", parts);
        }
    }

    private static String imageUrl(JsonNode block, String path) throws InvalidRequest {
        JsonNode source = RequestFields.object(block.path("source"), path + ".source");
        String kind = source.path("type").asText();
        if (kind.equals("base64")) {
            return "data:" + IngressJson.requiredText(source, "media_type", path + ".source") + ";base64,"
                    + IngressJson.requiredText(source, "data", path + ".source");
        }
        if (kind.equals("url")) {
            return IngressJson.requiredText(source, "url", path + ".source");
        }
        throw new InvalidRequest(path + ".source.type: expected 'base64' or 'url'.");
    }

    /** A tool result's content as the tool message's text: a string, or its text blocks joined. */
    private static String toolResult(JsonNode content, String path) throws InvalidRequest {
        if (content.isMissingNode() || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.asText();
        }
        if (!content.isArray()) {
            throw new InvalidRequest(path + ": expected a string or an array of text blocks.");
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < content.size(); i++) {
            JsonNode b = RequestFields.object(content.get(i), path + "." + i);
            if (!"text".equals(b.path("type").asText())) {
                throw new InvalidRequest(path + "." + i + ".type: only text blocks are supported in a tool result.");
            }
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append(RequestFields.text(b.path("text"), path + "." + i + ".text"));
        }
        return sb.toString();
    }

    /** The tools, and the tool choice (checked whether or not tools remain; sent only when they do). */
    private static void tools(JsonNode in, ObjectNode out) throws InvalidRequest {
        boolean converted = TOOLS.convert(in.path("tools"), out);
        ObjectNode choice = RequestFields.optionalObject(in, "tool_choice", "");
        if (choice == null) {
            return;
        }
        String type = choice.path("type").asText();
        String name = type.equals("tool") ? IngressJson.requiredText(choice, "name", "tool_choice") : null;
        String c = TOOL_CHOICE.get(type);
        if (name == null && c == null) {
            throw new InvalidRequest("tool_choice.type: expected 'auto', 'any', 'tool' or 'none'.");
        }
        boolean parallel = !RequestFields.optionalBoolean(choice, "disable_parallel_tool_use", "tool_choice", false);
        if (!converted) {
            return;
        }
        if (name != null) {
            out.putObject("tool_choice").put("type", "function").putObject("function").put("name", name);
        } else if (c != null) {
            out.put("tool_choice", c);
        }
        if (!parallel) {
            out.put("parallel_tool_calls", false);
        }
    }
}
