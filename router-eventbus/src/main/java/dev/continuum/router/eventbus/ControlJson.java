package dev.continuum.router.eventbus;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** Reading and writing control lines and error bodies, with the parser bounded like every other wire input. */
public final class ControlJson {
    /** The longest control line, newline included (docs/event-bus-protocol.md, section 4.1). */
    public static final int MAX_LINE_BYTES = 64 * 1024;
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(8)
                    .maxStringLength(MAX_LINE_BYTES).maxNumberLength(32).build())
            .build());

    private ControlJson() {
    }

    /** The line as a JSON object, or null when it is not one. */
    public static @Nullable ObjectNode parseObject(byte[] line) {
        try {
            JsonNode node = MAPPER.readTree(line);
            return node instanceof ObjectNode object ? object : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    public static ObjectNode object(String type) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("type", type);
        return node;
    }

    /** {@code node} as one NDJSON line. */
    public static ByteBuf line(ByteBufAllocator alloc, JsonNode node) {
        byte[] bytes = write(node);
        ByteBuf buf = alloc.buffer(bytes.length + 1);
        buf.writeBytes(bytes).writeByte('\n');
        return buf;
    }

    /** The error body of a refused request. */
    public static ByteBuf errorBody(ByteBufAllocator alloc, BusErrorCode code, String message) {
        ObjectNode root = MAPPER.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("code", code.code());
        error.put("message", message);
        if (code == BusErrorCode.UNSUPPORTED_PROTOCOL_VERSION) {
            error.putArray("supported").add(BusProtocol.VERSION);
        }
        byte[] bytes = write(root);
        return alloc.buffer(bytes.length).writeBytes(bytes);
    }

    public static String errorText(BusErrorCode code, String message) {
        ObjectNode root = MAPPER.createObjectNode();
        root.putObject("error").put("code", code.code()).put("message", message);
        return new String(write(root), StandardCharsets.UTF_8);
    }

    private static byte[] write(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of plain nodes always serializes", e);
        }
    }
}
