package dev.continuum.router.proxy.ingress.responses;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.ingress.UpstreamError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Errors in OpenAI's envelope, as the Responses API answers them: the router's own errors keep their type and
 * code (a refused pin is 503 {@code disaggregated_prefill_decode_unavailable}), a backend's error body is
 * normalized to the same shape.
 */
final class ResponsesErrors {
    private ResponsesErrors() {
    }

    static ByteBuf body(int status, ByteBuf upstream, ByteBufAllocator alloc) {
        UpstreamError e = UpstreamError.of(status, upstream);
        ObjectNode out = IngressJson.object();
        ObjectNode err = out.putObject("error").put("message", e.message()).put("type", type(status));
        if (e.code() == null) {
            err.putNull("code");
        } else {
            err.put("code", e.code());
        }
        err.putNull("param");
        return IngressJson.write(out, alloc);
    }

    private static String type(int status) {
        return switch (status) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 429 -> "rate_limit_error";
            default -> status < 500 ? "invalid_request_error" : "server_error";
        };
    }
}
