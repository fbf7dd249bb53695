package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.StreamAbort;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The seam between a client wire format and the chat-completion form that dispatch, pinning, retries and
 * relay know. An ingress bound to a path ({@link ProxyRoute#converted}) turns the client's body into a
 * {@code /v1/chat/completions} body once, before the request is inspected, policed and dispatched: that
 * converted body is what the {@link DispatchHook} sees and what every attempt sends, retries and fallbacks
 * included. On the way back it turns the upstream's chat answer into the client's wire: a buffered 2xx
 * JSON body whole, an SSE stream event by event, and every error (the router's own and an upstream's
 * non-2xx) into the ingress's error shape. Converters know nothing of backends or pins.
 *
 * <p>Every method runs on the client connection's event loop and must not block. Buffers: inputs are
 * borrowed (never released or retained past the call); outputs are new buffers the caller owns.
 *
 * <p>Bounds: the proxy holds at most {@link #MAX_BUFFERED_RESPONSE_BYTES} of a buffered answer (a longer one
 * is answered 502 in the ingress's error shape) and at most {@link #MAX_EVENT_BYTES} of one SSE event (a
 * longer one fails the stream, {@link StreamConverter#fail}); a converter's own per-stream state must be bounded too.
 */
public interface IngressConverter {
    /** The most of one upstream answer held to convert it whole. */
    int MAX_BUFFERED_RESPONSE_BYTES = 8 * 1024 * 1024;
    /** The most of one SSE event held until its end. */
    int MAX_EVENT_BYTES = 1024 * 1024;

    /**
     * The chat-completion body to dispatch for the client's {@code body}.
     *
     * @throws InvalidRequest when the body is not a valid request of this wire (answered 400 through
     *                        {@link #error})
     */
    ByteBuf toChatRequest(ByteBuf body, ByteBufAllocator alloc) throws InvalidRequest;

    /** The client's body for a complete 2xx chat-completion body. */
    ByteBuf fromChatResponse(ByteBuf chatBody, ByteBufAllocator alloc) throws InvalidResponse;

    /** The content type of what {@link #fromChatResponse} returns. */
    CharSequence responseContentType();

    /** A fresh converter for one streamed answer. */
    StreamConverter newStream();

    /**
     * The client's error body for an error answer with {@code status}: {@code body} is the router's own
     * OpenAI-shaped error, or whatever (at most {@link #MAX_BUFFERED_RESPONSE_BYTES}) a backend sent with a
     * non-2xx status. The status is kept.
     */
    ByteBuf error(int status, ByteBuf body, ByteBufAllocator alloc);

    /** The content type of what {@link #error} returns. */
    CharSequence errorContentType();

    /**
     * One streamed answer, event by event. The proxy splits the upstream's {@code text/event-stream} into
     * events and hands each event's {@code data} (its data lines joined by {@code \n}, {@code [DONE]}
     * included) in order. What the converter writes goes into the proxy's buffer for the upstream read the
     * event came in: the events of one read leave as one write, not one each.
     */
    interface StreamConverter {
        /**
         * Appends the bytes to send the client for one upstream event (complete SSE framing), or none, to
         * {@code out}.
         *
         * @throws InvalidResponse when the event cannot be converted: what this call appended to {@code out} is
         *                         discarded and the stream fails ({@link #fail} with the exception's reason)
         */
        void event(ByteBuf data, ByteBuf out) throws InvalidResponse;

        /** Appends the bytes to send after the upstream's last event (maybe none) to {@code out}. */
        void end(ByteBuf out);

        /**
         * Appends the wire's error ending to {@code out}: the upstream failed ({@code reason}) after the response
         * head went to the client, and the proxy ends the client's body after these bytes. {@code message} is the
         * router's own words for the client (never upstream text). Nothing when the client's stream already ended.
         */
        void fail(StreamAbort reason, String message, ByteBuf out);
    }

    /** The client's body is not a request of this wire. */
    final class InvalidRequest extends Exception {
        private static final long serialVersionUID = 1L;
        private final String detail;

        public InvalidRequest(String message) {
            super(message, null, false, false);
            this.detail = message;
        }

        /** Never null: every one is built with the detail the client is told. */
        @Override
        public String getMessage() {
            return detail;
        }
    }

    /** The upstream's answer cannot be expressed in this wire. */
    final class InvalidResponse extends Exception {
        private static final long serialVersionUID = 1L;
        private final StreamAbort reason;
        private final String detail;

        /** An answer or event that is not what the wire reads ({@link StreamAbort#INVALID_EVENT}). */
        public InvalidResponse(String message) {
            this(message, StreamAbort.INVALID_EVENT);
        }

        public InvalidResponse(String message, StreamAbort reason) {
            super(message, null, false, false);
            this.detail = message;
            this.reason = reason;
        }

        /** Why a stream ends on it: the {@code reason} label and the log line's cause. */
        public StreamAbort reason() {
            return reason;
        }

        /** Never null: every one is built with its detail (the router's words, safe to show a client). */
        @Override
        public String getMessage() {
            return detail;
        }
    }
}
