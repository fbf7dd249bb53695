package dev.continuum.router.proxy.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A toy wire, only for tests, that shows the ingress seam end to end. Requests are
 * {@code {"model":..., "say":..., "stream":...}}; a buffered answer is {@code {"echo": <assistant text>}}; a
 * stream is one {@code event: piece} per chat delta, then {@code event: end} with the number of pieces;
 * errors are {@code {"echo_error":{"status":..,"message":..}}}.
 */
final class EchoWireConverter implements IngressConverter {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public ByteBuf toChatRequest(ByteBuf body, ByteBufAllocator alloc) throws InvalidRequest {
        JsonNode in;
        try {
            in = read(body);
        } catch (InvalidResponse e) {
            throw new InvalidRequest("The body is not JSON.");
        }
        if (in == null || !in.path("say").isTextual()) {
            throw new InvalidRequest("'say' must be a string.");
        }
        ObjectNode chat = JSON.createObjectNode();
        chat.set("model", in.get("model"));
        chat.put("stream", in.path("stream").asBoolean(false));
        chat.putArray("messages").addObject().put("role", "user").put("content", in.get("say").asText());
        if (in.has("nvext")) {
            chat.set("nvext", in.get("nvext")); // lets a test show the strip applies to the converted body
        }
        return write(chat);
    }

    @Override
    public ByteBuf fromChatResponse(ByteBuf chatBody, ByteBufAllocator alloc) throws InvalidResponse {
        JsonNode chat = read(chatBody);
        JsonNode text = chat == null ? null : chat.path("choices").path(0).path("message").get("content");
        if (text == null || !text.isTextual()) {
            throw new InvalidResponse("no assistant message");
        }
        return write(JSON.createObjectNode().put("echo", text.asText()));
    }

    @Override
    public CharSequence responseContentType() {
        return "application/json";
    }

    @Override
    public StreamConverter newStream() {
        return new StreamConverter() {
            private int pieces;

            @Override
            public void event(ByteBuf data, ByteBuf out) throws InvalidResponse {
                if (data.toString(StandardCharsets.UTF_8).equals("[DONE]")) {
                    return;
                }
                JsonNode chunk = read(data);
                JsonNode text = chunk == null ? null : chunk.path("choices").path(0).path("delta").get("content");
                if (text == null || !text.isTextual()) {
                    throw new InvalidResponse("not a chat chunk");
                }
                pieces++;
                out.writeBytes(sse("piece", JSON.createObjectNode().put("text", text.asText())));
            }

            @Override
            public void end(ByteBuf out) {
                out.writeBytes(sse("end", JSON.createObjectNode().put("pieces", pieces)));
            }

            @Override
            public void fail(dev.continuum.router.proxy.metrics.StreamAbort reason, String message, ByteBuf out) {
                out.writeBytes(sse("failed", JSON.createObjectNode().put("reason", reason.label())
                        .put("message", message)));
            }
        };
    }

    @Override
    public ByteBuf error(int status, ByteBuf body, ByteBufAllocator alloc) {
        JsonNode in;
        try {
            in = read(body);
        } catch (InvalidResponse e) {
            in = null;
        }
        String message = in == null ? body.toString(StandardCharsets.UTF_8)
                : in.path("error").path("message").asText(in.toString());
        ObjectNode out = JSON.createObjectNode();
        out.putObject("echo_error").put("status", status).put("message", message);
        return write(out);
    }

    @Override
    public CharSequence errorContentType() {
        return "application/json";
    }

    private static byte[] sse(String event, JsonNode data) {
        try {
            return ("event: " + event + "\ndata: " + JSON.writeValueAsString(data) + "\n\n")
                    .getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JsonNode read(ByteBuf body) throws InvalidResponse {
        try (ByteBufInputStream in = new ByteBufInputStream(body.duplicate())) {
            return JSON.readTree((java.io.InputStream) in);
        } catch (IOException e) {
            throw new InvalidResponse("not JSON");
        }
    }

    private static ByteBuf write(JsonNode node) {
        try {
            return Unpooled.wrappedBuffer(JSON.writeValueAsBytes(node));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
