package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.FallbackReason;
import io.netty.handler.codec.http.FullHttpResponse;

/**
 * What a request answers when nothing better is left (its attempts and fallbacks spent): the last upstream 502/503
 * or the router's own 502/503/504, and which model-fallback trigger that failure is. Made only on a failure path.
 */
record LastError(int status, String message, FallbackReason trigger) {
    /** Before any attempt failed: no backend could take the request. */
    static final LastError NONE = new LastError(503, "No backend could serve the request.", FallbackReason.ERROR_CODE);

    /** The upstream answered {@code status}. */
    static LastError answered(int status) {
        return new LastError(status, "The upstream backend answered " + status + ".", FallbackReason.ERROR_CODE);
    }

    /** The router's own 502 (an upstream status as a fallback trigger). */
    static LastError badGateway(String message) {
        return new LastError(502, message, FallbackReason.ERROR_CODE);
    }

    /** The router's own 502 for a transport failure ({@code connection_error}). */
    static LastError connection(String message) {
        return new LastError(502, message, FallbackReason.CONNECTION_ERROR);
    }

    FullHttpResponse response() {
        return switch (status) {
            case 503 -> OpenAiErrors.serviceUnavailable("service_unavailable", message);
            case 504 -> OpenAiErrors.gatewayTimeout(message);
            default -> OpenAiErrors.badGateway(message);
        };
    }
}
