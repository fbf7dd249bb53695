package dev.continuum.router.eventbus;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;

/** The frames the listener answers with. Each method writes on the stream channel, which owns the buffers. */
final class BusResponses {
    private static final AsciiString JSON = AsciiString.cached("application/json");
    static final AsciiString NDJSON = AsciiString.cached("application/x-ndjson");

    private BusResponses() {
    }

    /**
     * A complete refusal: status, JSON body, end of stream. When the client is still sending, a
     * {@code RST_STREAM(NO_ERROR)} follows so it stops (RFC 9113, section 8.1).
     */
    static void refuse(Channel stream, BusErrorCode code, String message, boolean requestEnded, BusMetrics metrics) {
        HttpResponseStatus status = code.status();
        if (status == null) {
            throw new IllegalArgumentException("code: " + code + " (expected: one with an HTTP status)");
        }
        metrics.refused(code);
        Http2Headers headers = new DefaultHttp2Headers().status(status.codeAsText()).set(HttpHeaderNames.CONTENT_TYPE, JSON);
        stream.write(new DefaultHttp2HeadersFrame(headers));
        stream.writeAndFlush(new DefaultHttp2DataFrame(ControlJson.errorBody(stream.alloc(), code, message), true))
                .addListener(f -> {
                    if (!requestEnded && stream.isActive()) {
                        stream.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR));
                    }
                });
    }

    /** The 200 that accepts a request; its body follows. */
    static void accept(Channel stream, AsciiString contentType) {
        Http2Headers headers = new DefaultHttp2Headers().status(HttpResponseStatus.OK.codeAsText())
                .set(HttpHeaderNames.CONTENT_TYPE, contentType);
        stream.writeAndFlush(new DefaultHttp2HeadersFrame(headers));
    }

    /** The trailers that end an accepted session (docs/event-bus-protocol.md, section 4.4). */
    static void closeSession(Channel stream, BusErrorCode code) {
        Http2Headers trailers = new DefaultHttp2Headers().set(BusProtocol.CLOSE_TRAILER, code.code());
        stream.writeAndFlush(new DefaultHttp2HeadersFrame(trailers, true));
    }
}
