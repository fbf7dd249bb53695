package dev.continuum.router.eventbus;

import dev.continuum.router.core.logging.LogSafe;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 side of an SSE relay: sends {@code GET} with {@code Last-Event-ID} once connected, accepts only a
 * {@code 200 text/event-stream} answer, and passes the body's bytes on as they come (the relay forwards them
 * unparsed; the router parses and bounds them). The end of the body, or any other answer, closes the socket,
 * which ends the relay.
 */
public final class SseUpstream extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(SseUpstream.class);
    public static final String LAST_EVENT_ID = "Last-Event-ID";
    /** A backend's HTTP response head is bounded like any untrusted input: status line, headers, chunk. */
    public static final int MAX_INITIAL_LINE = 4096;
    public static final int MAX_HEADER_BYTES = 16384;
    public static final int MAX_CHUNK_BYTES = 65536;
    /** How long a dial to a backend may take. */
    public static final java.time.Duration CONNECT_TIMEOUT = java.time.Duration.ofSeconds(10);

    private final URI url;
    private final int port;
    private final @Nullable Long lastEventId;
    private boolean accepted;

    /**
     * Fired down the pipeline when the answer is not an SSE stream, before the socket closes (the router's source
     * shows it as its last error).
     *
     * @param status    the HTTP status (0 when the head could not be read)
     * @param sse       whether the Content-Type was {@code text/event-stream}
     * @param malformed why the response head could not be read ({@link #malformed}), or null when it was
     */
    public record Refused(int status, boolean sse, @Nullable String malformed) {
        public String reason() {
            if (malformed != null) {
                return "http: " + malformed;
            }
            return sse ? "http: answered " + status : "http: answered " + status + ", not text/event-stream";
        }
    }

    /**
     * Why a response head failed to decode, in words from a closed set: a head past the codec's bound is named as
     * such (the decoder hands on what it read of it, a status line and some headers, which is not the answer).
     */
    public static String malformed(@Nullable Throwable cause) {
        if (cause instanceof TooLongHttpHeaderException) {
            return "response header too large";
        }
        if (cause instanceof TooLongHttpLineException) {
            return "status line too long";
        }
        return "malformed response head";
    }

    public SseUpstream(URI url, int port, @Nullable Long lastEventId) {
        this.url = url;
        this.port = port;
        this.lastEventId = lastEventId;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        if (url.getRawQuery() != null) {
            path += "?" + url.getRawQuery();
        }
        FullHttpRequest get = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
        get.headers().set(HttpHeaderNames.HOST, url.getHost() + ":" + port)
                .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.TEXT_EVENT_STREAM)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        if (lastEventId != null) {
            get.headers().set(LAST_EVENT_ID, Long.toUnsignedString(lastEventId));
        }
        ctx.writeAndFlush(get);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpResponse response && response.decoderResult().isFailure()) {
                String why = malformed(response.decoderResult().cause());
                LOG.warn("backend KV-event stream {}: {}; not relayed", LogSafe.escape(url.toString()), why);
                ctx.fireUserEventTriggered(new Refused(0, false, why));
                ctx.close();
                return;
            }
            if (msg instanceof HttpResponse response) {
                String type = response.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
                boolean sse = type.toLowerCase(java.util.Locale.ROOT).startsWith("text/event-stream");
                accepted = response.status().equals(HttpResponseStatus.OK) && sse;
                if (!accepted) {
                    LOG.warn("backend KV-event stream {} answered {} {}; not relayed", LogSafe.escape(url.toString()),
                            response.status().code(), LogSafe.escape(type));
                    ctx.fireUserEventTriggered(new Refused(response.status().code(), sse, null));
                    ctx.close();
                    return;
                }
            }
            if (msg instanceof HttpContent content && accepted) {
                if (content.content().isReadable()) {
                    ctx.fireChannelRead(content.content().retain());
                }
                if (msg instanceof LastHttpContent) {
                    ctx.close(); // the backend ended its stream; the router resumes through a new subscribe
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }
}
