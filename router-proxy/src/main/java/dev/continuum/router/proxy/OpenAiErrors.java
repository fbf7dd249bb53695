package dev.continuum.router.proxy;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The one builder of error responses: OpenAI's envelope
 * {@code {"error":{"message":...,"type":...,"code":...,"param":null}}} with the status that
 * goes with it. Every response is a fresh {@link FullHttpResponse} owned by the caller (writing it
 * releases it).
 */
public final class OpenAiErrors {
    public static final String INVALID_REQUEST = "invalid_request_error";
    public static final String AUTHENTICATION = "authentication_error";
    public static final String PERMISSION = "permission_error";
    public static final String RATE_LIMIT = "rate_limit_error";
    public static final String SERVER = "server_error";

    /** Longest client-supplied value (model, path) quoted back in a message. */
    static final int MAX_ECHO = 200;

    private OpenAiErrors() {
    }

    /** A client-supplied value, shortened for quoting in an error message. */
    public static String clip(String clientValue) {
        return clientValue.length() <= MAX_ECHO ? clientValue : clientValue.substring(0, MAX_ECHO) + "...";
    }

    public static FullHttpResponse error(int status, String type, @Nullable String code, String message) {
        StringBuilder sb = new StringBuilder(96 + message.length())
                .append("{\"error\":{\"message\":\"");
        sb.append(JsonStringEncoder.getInstance().quoteAsString(message));
        sb.append("\",\"type\":\"").append(type).append("\",\"code\":");
        if (code == null) {
            sb.append("null");
        } else {
            sb.append('"').append(code).append('"');
        }
        sb.append(",\"param\":null}}");
        ByteBuf body = Unpooled.wrappedBuffer(sb.toString().getBytes(StandardCharsets.UTF_8));
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status), body);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return r;
    }

    public static FullHttpResponse invalidJson(String detail) {
        return error(400, INVALID_REQUEST, "invalid_json",
                "We could not parse the JSON body of your request. (" + detail + ")");
    }

    public static FullHttpResponse invalidRequest(String message, @Nullable String code) {
        return error(400, INVALID_REQUEST, code, message);
    }

    public static FullHttpResponse unauthorized(String message) {
        return error(401, AUTHENTICATION, "invalid_api_key", message);
    }

    public static FullHttpResponse forbidden(String code, String message) {
        return error(403, PERMISSION, code, message);
    }

    public static FullHttpResponse modelNotFound(String model) {
        return error(404, INVALID_REQUEST, "model_not_found",
                "The model '" + clip(model) + "' does not exist or is not served by this router.");
    }

    public static FullHttpResponse unknownRoute(String method, String path) {
        return error(404, INVALID_REQUEST, "unknown_url", "Invalid URL (" + clip(method) + " " + clip(path) + ")");
    }

    public static FullHttpResponse methodNotAllowed(String method, String path, String allow) {
        FullHttpResponse r = error(405, INVALID_REQUEST, "method_not_allowed",
                "Method " + clip(method) + " is not allowed on " + clip(path) + ". Allowed: " + allow + ".");
        r.headers().set(HttpHeaderNames.ALLOW, allow);
        return r;
    }

    public static FullHttpResponse requestTooLarge(long maxBytes) {
        return error(413, INVALID_REQUEST, "request_too_large",
                "The request body exceeds the limit of " + maxBytes + " bytes.");
    }

    public static FullHttpResponse uriTooLong() {
        return error(414, INVALID_REQUEST, "uri_too_long", "The request line is too long.");
    }

    public static FullHttpResponse headersTooLarge() {
        return error(431, INVALID_REQUEST, "request_header_fields_too_large", "The request headers are too large.");
    }

    public static FullHttpResponse badRequest(String message) {
        return error(400, INVALID_REQUEST, "bad_request", message);
    }

    public static FullHttpResponse rateLimited(long retryAfterSeconds, String scope) {
        FullHttpResponse r = error(429, RATE_LIMIT, "rate_limit_exceeded",
                "Rate limit exceeded (" + scope + "). Retry after " + retryAfterSeconds + " s.");
        r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(Math.max(1, retryAfterSeconds)));
        return r;
    }

    public static FullHttpResponse badGateway(String message) {
        return error(502, SERVER, "bad_gateway", message);
    }

    public static FullHttpResponse serviceUnavailable(String code, String message) {
        return error(503, SERVER, code, message);
    }

    public static FullHttpResponse gatewayTimeout(String message) {
        return error(504, SERVER, "gateway_timeout", message);
    }

    public static FullHttpResponse internalError() {
        return error(500, SERVER, "internal_error", "The router failed to handle the request.");
    }
}
