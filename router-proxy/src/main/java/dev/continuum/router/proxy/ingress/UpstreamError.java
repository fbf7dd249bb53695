package dev.continuum.router.proxy.ingress;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * What an error answer says, read from the router's own OpenAI-shaped error or whatever a backend sent
 * ({@code {"error":{"message","type","code"}}}, {@code {"error":"text"}}, {@code {"message"}}, or not JSON).
 *
 * @param message the message to show (never empty)
 * @param code    the OpenAI error code when there is one
 */
public record UpstreamError(String message, @Nullable String code) {
    /** The longest upstream text quoted into a converted error. */
    private static final int MAX_MESSAGE = 2048;

    public static UpstreamError of(int status, ByteBuf body) {
        JsonNode n = IngressJson.readLenient(body);
        String message = null;
        String code = null;
        if (n != null) {
            JsonNode e = n.path("error");
            if (e.isTextual()) {
                message = e.asText();
            } else if (e.isObject()) {
                message = textOrNull(e.path("message"));
                code = textOrNull(e.path("code"));
            } else {
                message = textOrNull(n.path("message"));
            }
        } else if (body.isReadable()) {
            message = body.toString(body.readerIndex(), Math.min(body.readableBytes(), MAX_MESSAGE),
                    StandardCharsets.UTF_8);
        }
        if (message == null || message.isBlank()) {
            message = "The upstream answered " + status + ".";
        }
        if (message.length() > MAX_MESSAGE) {
            message = message.substring(0, MAX_MESSAGE) + "...";
        }
        return new UpstreamError(message, code);
    }

    private static @Nullable String textOrNull(JsonNode n) {
        return n.isTextual() && !n.asText().isEmpty() ? n.asText() : null;
    }
}
