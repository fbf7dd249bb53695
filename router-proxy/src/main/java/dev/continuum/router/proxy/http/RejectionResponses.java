package dev.continuum.router.proxy.http;

import dev.continuum.router.proxy.IngressConverter;
import dev.continuum.router.proxy.OpenAiErrors;
import dev.continuum.router.proxy.ProxyRoute;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import org.jspecify.annotations.Nullable;

/**
 * The answer to each {@link Rejection}, in OpenAI's error envelope or, for a route with another wire (the Anthropic
 * Messages routes), that wire's ({@link #inWireOf}); always with {@code Connection: close}.
 */
final class RejectionResponses {
    /**
     * What a 503 of the ingress tells the client to wait: buffers and connection slots free up as
     * requests finish, so a short wait is the honest hint.
     */
    static final String RETRY_AFTER_SECONDS = "1";

    private RejectionResponses() {
    }

    /** {@code response} (owned) in the error shape of {@code route}'s wire; itself when it has none or no route. */
    static FullHttpResponse inWireOf(@Nullable ProxyRoute route, FullHttpResponse response) {
        IngressConverter conv = route == null ? null : route.converter();
        if (conv == null) {
            return response;
        }
        ByteBuf body = conv.error(response.status().code(), response.content(), ByteBufAllocator.DEFAULT);
        FullHttpResponse r = response.replace(body);
        response.release();
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, conv.errorContentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return r;
    }

    static FullHttpResponse of(Rejection reason, long maxBodyBytes) {
        FullHttpResponse r = switch (reason) {
            case BODY_TOO_LARGE -> OpenAiErrors.requestTooLarge(maxBodyBytes);
            case URI_TOO_LONG -> OpenAiErrors.uriTooLong();
            case HEADERS_TOO_LARGE -> OpenAiErrors.headersTooLarge();
            case MALFORMED -> OpenAiErrors.badRequest("Malformed HTTP request.");
            case BODY_READ_TIMEOUT -> OpenAiErrors.error(408, OpenAiErrors.INVALID_REQUEST, "request_timeout",
                    "The request body was not received in time.");
            case UNSUPPORTED_TRANSFER_CODING -> OpenAiErrors.error(501, OpenAiErrors.INVALID_REQUEST,
                    "unsupported_transfer_coding", "Only the chunked transfer coding is supported.");
            case BUFFERS_FULL -> retryLater(OpenAiErrors.serviceUnavailable("server_overloaded",
                    "The router is holding as many request bodies as it may; retry shortly."));
            case CONNECTION_LIMIT -> retryLater(OpenAiErrors.serviceUnavailable("server_overloaded",
                    "The router has as many open connections as it may; retry shortly."));
            case OUT_OF_MEMORY -> retryLater(OpenAiErrors.serviceUnavailable("server_overloaded",
                    "The router ran out of memory for this request; retry shortly."));
        };
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return r;
    }

    private static FullHttpResponse retryLater(FullHttpResponse r) {
        r.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
        return r;
    }
}
