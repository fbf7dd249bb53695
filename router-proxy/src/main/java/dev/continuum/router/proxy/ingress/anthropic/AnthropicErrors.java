package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.ingress.UpstreamError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Errors in Anthropic's envelope {@code {"type":"error","error":{"type","message"}}}, the type from the status as
 * Anthropic's API uses them. The OpenAI error code, when there is one, ends the message: that is how a client
 * tells {@code disaggregated_prefill_decode_unavailable} (a 503 {@code api_error}) from another failure.
 */
final class AnthropicErrors {
    private AnthropicErrors() {
    }

    static String type(int status) {
        return switch (status) {
            case 400, 405, 422 -> "invalid_request_error";
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 408, 504 -> "timeout_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case 529 -> "overloaded_error";
            default -> status < 500 ? "invalid_request_error" : "api_error";
        };
    }

    static ObjectNode envelope(int status, UpstreamError e) {
        ObjectNode out = IngressJson.object().put("type", "error");
        String message = e.code() == null || e.message().endsWith(e.code()) ? e.message()
                : e.message() + " Error code: " + e.code();
        out.putObject("error").put("type", type(status)).put("message", message);
        return out;
    }

    static ByteBuf body(int status, ByteBuf upstream, ByteBufAllocator alloc) {
        return IngressJson.write(envelope(status, UpstreamError.of(status, upstream)), alloc);
    }
}
