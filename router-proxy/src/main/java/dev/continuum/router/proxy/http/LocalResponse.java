package dev.continuum.router.proxy.http;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A complete answer from a {@link LocalRoute}. The server adds {@code Content-Length} and, when
 * the connection is closing, {@code Connection: close}. A streamed answer ({@link #streamed}) has no
 * {@code body}: the server writes the head, then lets {@code stream} write the body chunk by chunk (chunked
 * transfer encoding) until it ends; the connection closes after it.
 *
 * @param headers extra response headers
 * @param stream  the streamed body, or null for a complete one
 */
public record LocalResponse(int status, String contentType, byte[] body, Map<String, String> headers,
                            @Nullable StreamedBody stream) {
    public LocalResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status: " + status + " (expected: 100..599)");
        }
        headers = Map.copyOf(headers);
    }

    public LocalResponse(int status, String contentType, byte[] body, Map<String, String> headers) {
        this(status, contentType, body, headers, null);
    }

    /** A 200 whose body {@code stream} writes as it goes. */
    public static LocalResponse streamed(String contentType, Map<String, String> headers, StreamedBody stream) {
        return new LocalResponse(200, contentType, new byte[0], headers, stream);
    }

    public static LocalResponse json(int status, String json) {
        return new LocalResponse(status, "application/json", json.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    public static LocalResponse json(int status, byte[] json) {
        return new LocalResponse(status, "application/json", json, Map.of());
    }

    public static LocalResponse text(int status, String text) {
        return new LocalResponse(status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    public LocalResponse withHeader(String name, String value) {
        Map<String, String> h = new HashMap<>(headers);
        h.put(name, value);
        return new LocalResponse(status, contentType, body, h, stream);
    }
}
