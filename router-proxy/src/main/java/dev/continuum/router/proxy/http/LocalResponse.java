package dev.continuum.router.proxy.http;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * A complete answer from a {@link LocalRoute}. The server adds {@code Content-Length} and, when
 * the connection is closing, {@code Connection: close}.
 *
 * @param headers extra response headers
 */
public record LocalResponse(int status, String contentType, byte[] body, Map<String, String> headers) {
    public LocalResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status: " + status + " (expected: 100..599)");
        }
        headers = Map.copyOf(headers);
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
        return new LocalResponse(status, contentType, body, h);
    }
}
