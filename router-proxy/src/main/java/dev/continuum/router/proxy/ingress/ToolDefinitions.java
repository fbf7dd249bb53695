package dev.continuum.router.proxy.ingress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.IngressConverter.InvalidRequest;

/**
 * A wire's tool definitions as chat-completion {@code tools[]} of {@code type: function}. Only the wire's own
 * function tools convert; any other type (a tool the wire's provider runs itself, such as web search, or one whose
 * schema the provider defines) is refused with its field path and the reason, so a client learns at once that the
 * tool is not available here rather than getting an answer produced without it (docs/ingresses.md).
 *
 * @param functionType     the {@code type} of a function tool in the wire
 * @param typeWhenAbsent   the type a tool without {@code type} has
 * @param schemaField      where the wire keeps the tool's JSON schema (sent as {@code parameters})
 * @param schemaRequired   whether a tool without a schema object is refused
 * @param notSupportedWhy  the end of the refusal of another type: why this router cannot offer it
 */
public record ToolDefinitions(String functionType, String typeWhenAbsent, String schemaField, boolean schemaRequired,
                              String notSupportedWhy) {
    /**
     * Sets {@code out.tools} to the converted {@code tools} (left unset when there are none).
     *
     * @return whether any tool was converted
     */
    public boolean convert(JsonNode tools, ObjectNode out) throws InvalidRequest {
        if (!RequestFields.given(tools)) {
            return false;
        }
        if (!tools.isArray()) {
            throw new InvalidRequest("tools: expected an array.");
        }
        if (tools.isEmpty()) {
            return false;
        }
        ArrayNode converted = out.putArray("tools");
        for (int i = 0; i < tools.size(); i++) {
            String path = "tools." + i;
            JsonNode t = RequestFields.object(tools.get(i), path);
            JsonNode typeNode = t.path("type");
            String type = RequestFields.given(typeNode) ? RequestFields.text(typeNode, path + ".type") : typeWhenAbsent;
            if (!type.equals(functionType)) {
                throw new InvalidRequest(path + ".type: '" + IngressJson.clip(type) + "' is not supported: "
                        + notSupportedWhy);
            }
            ObjectNode fn = converted.addObject().put("type", "function").putObject("function");
            fn.put("name", IngressJson.requiredText(t, "name", path));
            String description = RequestFields.optionalText(t, "description", path);
            if (description != null) {
                fn.put("description", description);
            }
            JsonNode schema = t.path(schemaField);
            if (schema.isObject()) {
                fn.set("parameters", schema);
            } else if (RequestFields.given(schema)) {
                throw new InvalidRequest(path + "." + schemaField + ": expected an object.");
            } else if (schemaRequired) {
                throw new InvalidRequest(path + "." + schemaField + ": Field required (an object).");
            }
            if (RequestFields.given(t.path("strict"))) {
                fn.put("strict", RequestFields.optionalBoolean(t, "strict", path, false));
            }
        }
        return true;
    }
}
