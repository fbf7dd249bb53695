package dev.continuum.router.proxy.ingress.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.ingress.RequestFields;
import dev.continuum.router.proxy.ingress.ToolDefinitions;
import dev.continuum.router.proxy.IngressConverter.InvalidRequest;
import java.util.Set;

/**
 * An OpenAI Responses request as a chat-completion body, field by field (docs/ingresses.md has the table). The
 * chat body is built new: nothing the client sent reaches the upstream unless converted here. The router keeps
 * no responses, so what needs a stored one ({@code previous_response_id}, {@code conversation}, background
 * mode) is refused.
 */
final class ResponsesRequests {
    /** Function tools only: hosted tools run on OpenAI's side. */
    private static final ToolDefinitions TOOLS = new ToolDefinitions("function", "", "parameters", false,
            "this router offers the model function tools only; hosted tools (web_search, file_search,"
                    + " code_interpreter, computer_use, mcp, ...) are run by OpenAI's API, and this router runs none"
                    + " of them.");
    private static final Set<String> TOOL_CHOICES = Set.of("auto", "none", "required");

    private ResponsesRequests() {
    }

    static ObjectNode toChat(ObjectNode in) throws InvalidRequest {
        ObjectNode out = IngressJson.object();
        JsonNode model = in.path("model");
        if (!model.isTextual() || model.asText().isEmpty()) {
            throw new InvalidRequest("model: Field required (a non-empty string).");
        }
        out.put("model", model.asText());
        for (String stored : new String[] {"previous_response_id", "conversation"}) {
            if (!in.path(stored).isMissingNode() && !in.path(stored).isNull()) {
                throw new InvalidRequest(stored + ": not supported (this router stores no responses; send the whole"
                        + " conversation as input items).");
            }
        }
        if (RequestFields.optionalBoolean(in, "background", "", false)) {
            throw new InvalidRequest("background: not supported (this router stores no responses).");
        }
        ArrayNode messages = out.putArray("messages");
        String instructions = RequestFields.optionalText(in, "instructions", "");
        if (instructions != null && !instructions.isEmpty()) {
            messages.addObject().put("role", "system").put("content", instructions);
        }
        JsonNode input = in.path("input");
        if (input.isTextual()) {
            messages.addObject().put("role", "user").put("content", input.asText());
        } else if (input.isArray()) {
            for (int i = 0; i < input.size(); i++) {
                item(RequestFields.object(input.get(i), "input." + i), "input." + i, messages);
            }
        } else {
            throw new InvalidRequest("input: Field required (a string or an array of input items).");
        }
        JsonNode max = in.path("max_output_tokens");
        if (max.isIntegralNumber() && max.asLong() > 0) {
            out.put("max_tokens", max.asLong());
        } else if (!max.isMissingNode() && !max.isNull()) {
            throw new InvalidRequest("max_output_tokens: expected a positive integer.");
        }
        for (String f : new String[] {"temperature", "top_p"}) {
            JsonNode n = in.path(f);
            if (n.isNumber()) {
                out.set(f, n);
            } else if (!n.isMissingNode() && !n.isNull()) {
                throw new InvalidRequest(f + ": expected a number.");
            }
        }
        if (RequestFields.given(in.path("parallel_tool_calls"))) {
            out.put("parallel_tool_calls", RequestFields.optionalBoolean(in, "parallel_tool_calls", "", true));
        }
        String user = RequestFields.optionalText(in, "user", "");
        if (user != null) {
            out.put("user", user);
        }
        ObjectNode reasoning = RequestFields.optionalObject(in, "reasoning", "");
        String effort = reasoning == null ? null : RequestFields.optionalText(reasoning, "effort", "reasoning");
        if (effort != null) {
            out.put("reasoning_effort", effort);
        }
        ObjectNode text = RequestFields.optionalObject(in, "text", "");
        if (text != null) {
            format(text, out);
        }
        tools(in, out);
        boolean stream = RequestFields.optionalBoolean(in, "stream", "", false);
        out.put("stream", stream);
        if (stream) {
            out.putObject("stream_options").put("include_usage", true);
        }
        return out;
    }

    private static void item(JsonNode item, String path, ArrayNode messages) throws InvalidRequest {
        String type = item.path("type").asText(item.has("role") ? "message" : "");
        switch (type) {
            case "message" -> message(item, path, messages);
            case "function_call" -> {
                ObjectNode call = IngressJson.object();
                call.put("id", IngressJson.requiredText(item, "call_id", path));
                call.put("type", "function");
                // The arguments are JSON text on this wire; an object in their place is a client's mistake.
                String arguments = RequestFields.optionalText(item, "arguments", path);
                call.putObject("function").put("name", IngressJson.requiredText(item, "name", path))
                        .put("arguments", arguments == null ? "{}" : arguments);
                // Consecutive calls are one assistant turn with several tool calls.
                JsonNode last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
                if (last instanceof ObjectNode l && "assistant".equals(l.path("role").asText())
                        && l.path("tool_calls").isArray()) {
                    ((ArrayNode) l.path("tool_calls")).add(call);
                } else {
                    ObjectNode m = messages.addObject().put("role", "assistant");
                    m.putNull("content");
                    m.putArray("tool_calls").add(call);
                }
            }
            case "function_call_output" -> {
                JsonNode output = item.path("output");
                String text = output.isTextual() ? output.asText() : joinText(output, path + ".output");
                messages.addObject().put("role", "tool").put("tool_call_id", IngressJson.requiredText(item, "call_id", path))
                        .put("content", text);
            }
            case "reasoning" -> {
                // Reasoning summaries of an earlier turn: the chat wire has no place for them.
            }
            default -> throw new InvalidRequest(path + ".type: '" + IngressJson.clip(type) + "' is not supported.");
        }
    }

    private static void message(JsonNode item, String path, ArrayNode messages) throws InvalidRequest {
        String role = item.path("role").asText();
        String chatRole = switch (role) {
            case "user", "assistant", "system" -> role;
            case "developer" -> "system";
            default -> throw new InvalidRequest(path + ".role: expected 'user', 'assistant', 'system' or 'developer'.");
        };
        JsonNode content = item.path("content");
        if (content.isTextual()) {
            messages.addObject().put("role", chatRole).put("content", content.asText());
            return;
        }
        if (!content.isArray()) {
            throw new InvalidRequest(path + ".content: expected a string or an array of content parts.");
        }
        if (!chatRole.equals("user")) {
            messages.addObject().put("role", chatRole).put("content", joinText(content, path + ".content"));
            return;
        }
        ArrayNode parts = IngressJson.object().putArray("content");
        for (int i = 0; i < content.size(); i++) {
            String p = path + ".content." + i;
            JsonNode part = RequestFields.object(content.get(i), p);
            switch (part.path("type").asText()) {
                case "input_text", "output_text", "text" ->
                        parts.addObject().put("type", "text").put("text", RequestFields.text(part.path("text"), p + ".text"));
                case "input_image" -> {
                    if (!part.path("image_url").isTextual()) {
                        throw new InvalidRequest(p + ".image_url: Field required (file_id images are not supported).");
                    }
                    ObjectNode url = parts.addObject().put("type", "image_url").putObject("image_url")
                            .put("url", part.path("image_url").asText());
                    String detail = RequestFields.optionalText(part, "detail", p);
                    if (detail != null) {
                        url.put("detail", detail);
                    }
                }
                default -> throw new InvalidRequest(p + ".type: '" + IngressJson.clip(part.path("type").asText())
                        + "' is not supported.");
            }
        }
        messages.addObject().put("role", "user").set("content", parts);
    }

    /** Text parts joined (assistant, system and tool turns carry one string). */
    private static String joinText(JsonNode parts, String path) throws InvalidRequest {
        if (!parts.isArray()) {
            throw new InvalidRequest(path + ": expected a string or an array of text parts.");
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            JsonNode part = RequestFields.object(parts.get(i), path + "." + i);
            String type = part.path("type").asText();
            if (!type.equals("input_text") && !type.equals("output_text") && !type.equals("text")
                    && !type.equals("refusal")) {
                throw new InvalidRequest(path + "." + i + ".type: '" + IngressJson.clip(type) + "' is not supported here.");
            }
            String field = type.equals("refusal") ? "refusal" : "text";
            sb.append(RequestFields.text(part.path(field), path + "." + i + "." + field));
        }
        return sb.toString();
    }

    private static void format(ObjectNode text, ObjectNode out) throws InvalidRequest {
        ObjectNode format = RequestFields.optionalObject(text, "format", "text");
        if (format == null) {
            return;
        }
        switch (format.path("type").asText()) {
            case "text" -> { }
            case "json_object" -> out.putObject("response_format").put("type", "json_object");
            case "json_schema" -> {
                ObjectNode rf = out.putObject("response_format").put("type", "json_schema");
                ObjectNode js = rf.putObject("json_schema");
                js.put("name", IngressJson.requiredText(format, "name", "text.format"));
                if (!format.path("schema").isObject()) {
                    throw new InvalidRequest("text.format.schema: Field required (an object).");
                }
                js.set("schema", format.path("schema"));
                if (RequestFields.given(format.path("strict"))) {
                    js.put("strict", RequestFields.optionalBoolean(format, "strict", "text.format", false));
                }
                String description = RequestFields.optionalText(format, "description", "text.format");
                if (description != null) {
                    js.put("description", description);
                }
            }
            default -> throw new InvalidRequest("text.format.type: expected 'text', 'json_object' or 'json_schema'.");
        }
    }

    /** The tools, and the tool choice (checked whether or not tools remain; sent only when they do). */
    private static void tools(JsonNode in, ObjectNode out) throws InvalidRequest {
        boolean converted = TOOLS.convert(in.path("tools"), out);
        JsonNode choice = in.path("tool_choice");
        if (!RequestFields.given(choice)) {
            return;
        }
        if (choice.isTextual() && TOOL_CHOICES.contains(choice.asText())) {
            if (converted) {
                out.put("tool_choice", choice.asText());
            }
        } else if (choice.isObject() && "function".equals(choice.path("type").asText())) {
            String name = IngressJson.requiredText(choice, "name", "tool_choice");
            if (converted) {
                out.putObject("tool_choice").put("type", "function").putObject("function").put("name", name);
            }
        } else {
            throw new InvalidRequest("tool_choice: expected 'auto', 'none', 'required' or a function.");
        }
    }
}
