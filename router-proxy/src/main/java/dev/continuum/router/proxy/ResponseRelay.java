package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.StreamAbort;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Relays one committed upstream answer to the client: the head (hop-by-hop and untrusted headers removed,
 * routing headers added, chunked when the length is unknown), then each upstream message as it arrives,
 * flushed at the end of each upstream read, with backpressure: when the client channel stops being
 * writable the upstream's auto-read goes off until it drains, so at most one read plus the client's write
 * buffer is held whatever the answer's length.
 *
 * <p>Only the last write carries a promise; the others use the channel's void promise (a failed write fires
 * {@code exceptionCaught} and the client connection closes), which spares a promise per relayed chunk.
 *
 * <p>Behind a converting ingress the body is rewritten on the way: a streamed 2xx event by event
 * ({@link SseEvents}, {@link IngressConverter.StreamConverter}), the events converted from one upstream read
 * gathered in one buffer and written once at the end of the read ({@link #endOfRead}); anything else is held (at most
 * {@link IngressConverter#MAX_BUFFERED_RESPONSE_BYTES}) and converted whole, its head written with it.
 * Buffers: each message given to {@link #relay} is written on (the write releases it) or released here.
 *
 * <p>A converted stream's head waits for the end of the upstream read it came in, and goes out with that read's
 * events: so when the upstream fails in that first read the client still gets a status and the wire's error body
 * ({@link #fail}), and once the head went out a failure ends the stream with the wire's error event and a terminated
 * body. A relay that converts nothing cannot speak for the upstream's wire: its client connection is cut.
 */
final class ResponseRelay {
    /** {@link #relay}: more to come. */
    static final int CONTINUE = 0;
    /** {@link #relay}: the last write went out ({@link #lastWrite()}). */
    static final int DONE = 1;
    /** {@link #relay}: the answer cannot be completed; the client connection must be cut. */
    static final int ABORT = 2;
    /** A batch's first size: a read's worth of converted token events (the pool grows it when more come). */
    private static final int BATCH_BYTES = 4096;

    private final DefaultProxyService service;
    private final ClientExchange client;
    private final Channel clientCh;
    private final @Nullable IngressConverter converter;
    private int status;
    private boolean closeClient;
    private boolean upstreamKeepAlive;
    private @Nullable ChannelFuture lastWrite;
    private @Nullable String fallbackModel;
    /** Converted whole: the head waits for the body. */
    private @Nullable HeldAnswer held;
    /** Converted event by event. */
    private IngressConverter.@Nullable StreamConverter stream;
    private @Nullable SseEvents events;
    /** Made with {@link #events}: a relay that converts nothing allocates nothing for it. */
    private SseEvents.@Nullable Sink sink;
    /** The converted events of the current upstream read, written at its end; null when none yet. */
    private @Nullable ByteBuf batch;
    /** A converted stream's head until the end of the read it came in; null once written. */
    private @Nullable HttpResponse pendingHead;
    /** Why {@link #relay} answered {@link #ABORT}. */
    private StreamAbort abortReason = StreamAbort.UPSTREAM_CLOSED;
    private String abortDetail = "the upstream closed the connection mid-answer";

    ResponseRelay(DefaultProxyService service, ClientExchange client, @Nullable IngressConverter converter) {
        this.service = service;
        this.client = client;
        this.clientCh = client.channel();
        this.converter = converter;
    }

    static boolean isEventStream(@Nullable String contentType) {
        return contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
    }

    /** The request fell back to this model: the head says so ({@link ModelFallback#X_FALLBACK_MODEL}). */
    void fallbackModel(@Nullable String model) {
        this.fallbackModel = model;
    }

    /** Takes over the answer's head (owned from now on) and writes it, unless the body is converted whole. */
    void commit(HttpResponse head, int code, @Nullable PlanGuard guard, @Nullable Backend served, boolean disclose) {
        status = code;
        HttpHeaders h = head.headers();
        upstreamKeepAlive = HttpUtil.isKeepAlive(head);
        HopByHop.stripResponse(h);
        UntrustedHeaders.stripResponse(h); // no upstream x-dynamo-* or x-continuum-* header reaches the client
        PlanGuard.decorate(guard, h, served, disclose);
        String fm = fallbackModel;
        if (fm != null) {
            h.set(ModelFallback.X_FALLBACK_MODEL, fm);
        }
        head.setProtocolVersion(HttpVersion.HTTP_1_1);
        closeClient = client.closeAfterResponse();
        IngressConverter conv = converter;
        if (conv != null) {
            // Converted event by event only when events come (a 2xx event stream); anything else whole.
            if (code < 200 || code >= 300 || !isEventStream(h.get(HttpHeaderNames.CONTENT_TYPE))) {
                held = new HeldAnswer(head, clientCh.alloc(), IngressConverter.MAX_BUFFERED_RESPONSE_BYTES);
                return;
            }
            stream = conv.newStream();
            events = new SseEvents(clientCh.alloc());
            sink = this::writeEvent;
            h.remove(HttpHeaderNames.CONTENT_LENGTH);
        }
        boolean hasBody = code != 204 && code != 304;
        if (hasBody && !h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            if (client.request().protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                closeClient = true; // no chunked coding for HTTP/1.0: the close ends the body
            } else {
                h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        if (closeClient) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        if (events != null) {
            pendingHead = head; // written at the end of this read, with its events (writeHead)
        } else {
            clientCh.write(head, clientCh.voidPromise());
        }
    }

    private void writeHead() {
        HttpResponse h = pendingHead;
        if (h != null) {
            pendingHead = null;
            clientCh.write(h, clientCh.voidPromise());
        }
    }

    /** Relays one upstream message (owned from now on); {@code upstream} is paused if the client is full. */
    int relay(HttpContent c, @Nullable Channel upstream) {
        if (c.decoderResult().isFailure()) {
            // A chunked body cut short decodes as a failed last chunk: never relay it as a clean end.
            c.release();
            return abort(StreamAbort.UPSTREAM_CLOSED, "the upstream closed the connection mid-answer");
        }
        HeldAnswer h = held;
        if (h != null) {
            return hold(h, c);
        }
        if (events != null) {
            return convertChunk(c);
        }
        if (c instanceof LastHttpContent) {
            lastWrite = clientCh.writeAndFlush(c);
            return DONE;
        }
        clientCh.write(c, clientCh.voidPromise());
        pauseIfFull(upstream);
        return CONTINUE;
    }

    private int convertChunk(HttpContent c) {
        // Only called with events set, and the three are set together.
        SseEvents ev = Objects.requireNonNull(events);
        IngressConverter.StreamConverter sc = Objects.requireNonNull(stream);
        SseEvents.Sink out = Objects.requireNonNull(sink);
        boolean last = c instanceof LastHttpContent;
        try {
            ev.feed(c.content(), out);
            if (last) {
                ev.finish(out);
            }
        } catch (IngressConverter.InvalidResponse e) {
            return abort(e.reason(), e.getMessage());
        } finally {
            c.release();
        }
        if (last) {
            ByteBuf rest = batch();
            batch = null;
            sc.end(rest);
            writeHead();
            lastWrite = clientCh.writeAndFlush(new DefaultLastHttpContent(rest));
            return DONE;
        }
        return CONTINUE; // the read's events go out at its end (endOfRead), where the client may fill up
    }

    private int abort(StreamAbort reason, String detail) {
        abortReason = reason;
        abortDetail = detail;
        return ABORT;
    }

    /** Why the last {@link #relay} answered {@link #ABORT}. */
    StreamAbort abortReason() {
        return abortReason;
    }

    /** What went wrong, in the router's words (safe to show the client). */
    String abortDetail() {
        return abortDetail;
    }

    private void writeEvent(ByteBuf data) throws IngressConverter.InvalidResponse {
        // The sink that calls this is made together with the stream.
        ByteBuf b = batch();
        int mark = b.writerIndex();
        try {
            Objects.requireNonNull(stream).event(data, b);
        } catch (IngressConverter.InvalidResponse e) {
            b.writerIndex(mark); // the events before the refused one stay whole; nothing of it goes out
            throw e;
        }
    }

    /**
     * The upstream failed ({@code reason}) after this relay took the answer: ends the client's answer in the
     * ingress's words and returns true ({@link #lastWrite()} is then set), or returns false when the relay converts
     * nothing (the caller cuts the connection). Nothing went out yet (a held answer, a converted stream whose head
     * waits for the end of its first read): the router's 502, or 504 after a timeout, in the ingress's error shape.
     * The head went out: the stream converter's error ending, then the body's terminator.
     */
    boolean fail(StreamAbort reason, String message) {
        IngressConverter conv = converter;
        if (conv == null) {
            return false;
        }
        ByteBuf b = batch;
        batch = null;
        IngressConverter.StreamConverter sc = stream;
        if (sc != null && pendingHead == null) {
            ByteBuf rest = b == null ? clientCh.alloc().buffer(BATCH_BYTES) : b;
            sc.fail(reason, message, rest);
            lastWrite = clientCh.writeAndFlush(new DefaultLastHttpContent(rest));
            return true;
        }
        if (b != null) {
            b.release();
        }
        pendingHead = null;
        discardHeld();
        FullHttpResponse error = reason.timeout() ? OpenAiErrors.gatewayTimeout(message)
                : OpenAiErrors.badGateway(message);
        status = error.status().code();
        writeWhole(convertError(conv, error));
        return true;
    }

    private ByteBuf batch() {
        ByteBuf b = batch;
        if (b == null) {
            b = clientCh.alloc().buffer(BATCH_BYTES);
            batch = b;
        }
        return b;
    }

    /**
     * The upstream read ended (the caller flushes next): the events converted from it are written as one
     * message, and the upstream paused if that filled the client. Nothing to do for a relay that converts nothing.
     */
    void endOfRead(@Nullable Channel upstream) {
        writeHead();
        ByteBuf b = batch;
        if (b == null) {
            return;
        }
        batch = null;
        if (b.isReadable()) {
            clientCh.write(new DefaultHttpContent(b), clientCh.voidPromise());
            pauseIfFull(upstream);
        } else {
            b.release();
        }
    }

    private int hold(HeldAnswer h, HttpContent c) {
        boolean last = c instanceof LastHttpContent;
        if (!h.add(c)) {
            upstreamKeepAlive = false; // the rest is unread
            return answerHeld(OpenAiErrors.badGateway("The upstream backend's answer is too large to convert."));
        }
        if (!last) {
            return CONTINUE;
        }
        IngressConverter conv = Objects.requireNonNull(converter); // only a converting relay holds an answer
        HttpHeaders headers = h.head.headers();
        ByteBuf converted;
        if (status >= 200 && status < 300) {
            try {
                converted = conv.fromChatResponse(h.body, clientCh.alloc());
            } catch (IngressConverter.InvalidResponse e) {
                return answerHeld(OpenAiErrors.badGateway("The upstream backend's answer could not be converted."));
            }
            headers.set(HttpHeaderNames.CONTENT_TYPE, conv.responseContentType());
        } else {
            converted = conv.error(status, h.body, clientCh.alloc());
            headers.set(HttpHeaderNames.CONTENT_TYPE, conv.errorContentType());
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, h.head.status(), converted, headers,
                EmptyHttpHeaders.INSTANCE);
        discardHeld();
        return writeWhole(r);
    }

    /** Answers the router's own error instead of the held upstream answer (nothing was written yet). */
    private int answerHeld(FullHttpResponse error) {
        discardHeld();
        status = error.status().code();
        return writeWhole(convertError(converter, error));
    }

    private int writeWhole(FullHttpResponse r) {
        HttpHeaders h = r.headers();
        h.remove(HttpHeaderNames.TRANSFER_ENCODING);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
        if (closeClient) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        lastWrite = clientCh.writeAndFlush(r);
        return DONE;
    }

    private void discardHeld() {
        HeldAnswer h = held;
        held = null;
        if (h != null) {
            h.release();
        }
    }

    private void pauseIfFull(@Nullable Channel upstream) {
        if (!clientCh.isWritable() && upstream != null && upstream.config().isAutoRead()) {
            upstream.config().setAutoRead(false);
            service.countPause();
        }
    }

    /** The client drained: a paused upstream reads again. */
    void resume(@Nullable Channel upstream) {
        if (upstream != null && clientCh.isWritable() && !upstream.config().isAutoRead()) {
            upstream.config().setAutoRead(true); // also issues a read
        }
    }

    /** Releases what a relay that will not finish still holds. */
    void close() {
        discardHeld();
        ByteBuf b = batch;
        batch = null;
        if (b != null) {
            b.release();
        }
        SseEvents ev = events;
        events = null;
        if (ev != null) {
            ev.close();
        }
    }

    ChannelFuture lastWrite() {
        ChannelFuture f = lastWrite;
        if (f == null) {
            throw new IllegalStateException("not done");
        }
        return f;
    }

    int status() {
        return status;
    }

    boolean closeClient() {
        return closeClient;
    }

    /** Whether the upstream connection may be pooled once the answer was read to its end. */
    boolean upstreamKeepAlive() {
        return upstreamKeepAlive;
    }

    /**
     * Writes the router's own complete answer ({@code response}, owned: an error, the model list, a local route's
     * answer) with the routing headers when the request had a plan and the fallback model when it fell back; an
     * error goes out in the ingress's shape (the router's 2xx answers are in the client's wire already).
     */
    static void answer(ClientExchange client, @Nullable IngressConverter converter, FullHttpResponse response,
            @Nullable PlanGuard guard, @Nullable Backend served, @Nullable String fallbackModel) {
        if (guard != null) {
            PlanGuard.decorate(guard, response.headers(), served, client.request().headers().contains(PlanGuard.X_BACKEND));
        }
        if (fallbackModel != null) {
            response.headers().set(ModelFallback.X_FALLBACK_MODEL, fallbackModel);
        }
        FullHttpResponse r = response.status().code() < 300 ? response : convertError(converter, response);
        boolean close = client.closeAfterResponse();
        if (close) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        int status = r.status().code();
        client.responseComplete(status, close, client.channel().writeAndFlush(r));
    }

    /**
     * {@code response} (an OpenAI-shaped error, owned) in the ingress's error shape; itself when there is no
     * converter. Status and headers are kept.
     */
    static FullHttpResponse convertError(@Nullable IngressConverter converter, FullHttpResponse response) {
        if (converter == null) {
            return response;
        }
        ByteBuf body = converter.error(response.status().code(), response.content(),
                io.netty.buffer.ByteBufAllocator.DEFAULT);
        FullHttpResponse r = response.replace(body);
        response.release();
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, converter.errorContentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return r;
    }
}
