package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/** A chat tool call's {@code arguments} string as the {@code input} object of a {@code tool_use} block. */
final class ToolInput {
    private ToolInput() {
    }

    /** The arguments as an object; arguments that are not a JSON object are kept under {@code _raw}. */
    static JsonNode parse(String arguments) {
        if (arguments.isBlank()) {
            return IngressJson.object();
        }
        JsonNode n = IngressJson.readLenient(Unpooled.wrappedBuffer(arguments.getBytes(StandardCharsets.UTF_8)));
        if (n instanceof ObjectNode) {
            return n;
        }
        return IngressJson.object().put("_raw", arguments);
    }
}
