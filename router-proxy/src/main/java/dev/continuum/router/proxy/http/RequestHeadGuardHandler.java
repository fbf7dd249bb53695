package dev.continuum.router.proxy.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;

/**
 * Right after the codec: turns decoder failures into a {@link RejectedRequest} (request line
 * over {@code max_initial_line_length} = 414, headers over {@code max_header_size} = 431, any
 * other malformed message = 400, a framing {@link RequestFraming} refuses = 400 or 501) and reports
 * heads and request ends to the header-read timeout.
 * After a rejection the codec discards the connection's input and so does this handler; the lingering
 * close drains until the client closes or a bound is reached.
 * Buffers: releases failed and discarded messages; forwards the rest.
 */
final class RequestHeadGuardHandler extends ChannelInboundHandlerAdapter {
    private final HeaderReadTimeoutHandler headTimeout;
    private final LingeringClose linger;
    private boolean rejected;

    RequestHeadGuardHandler(HeaderReadTimeoutHandler headTimeout, LingeringClose linger) {
        this.headTimeout = headTimeout;
        this.linger = linger;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (rejected) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest req) {
            headTimeout.headReceived();
            DecoderResult r = req.decoderResult();
            if (r.isFailure()) {
                reject(ctx, msg, rejectionFor(r.cause()));
                return;
            }
            Rejection framing = RequestFraming.check(req);
            if (framing != null) {
                reject(ctx, msg, framing);
                return;
            }
        }
        if (msg instanceof HttpContent c && c.decoderResult().isFailure()) {
            reject(ctx, msg, Rejection.MALFORMED); // for example a malformed chunk size
            return;
        }
        if (msg instanceof LastHttpContent) {
            headTimeout.requestComplete();
        }
        ctx.fireChannelRead(msg);
    }

    private void reject(ChannelHandlerContext ctx, Object msg, Rejection reason) {
        rejected = true;
        linger.unframed(); // a refused head's framing is not trusted to say where its body ends
        HttpRequest decoded = msg instanceof HttpRequest req && req.decoderResult().isSuccess() ? req : null;
        HttpMethod method = decoded == null ? null : decoded.method();
        // A head refused for its size was decoded up to its request line: its target still names the route's wire.
        String uri = decoded != null ? decoded.uri()
                : reason == Rejection.HEADERS_TOO_LARGE && msg instanceof HttpRequest req ? req.uri() : null;
        ReferenceCountUtil.release(msg);
        ctx.fireChannelRead(new RejectedRequest(reason, method, uri));
    }

    static Rejection rejectionFor(Throwable cause) {
        if (cause instanceof TooLongHttpLineException) {
            return Rejection.URI_TOO_LONG;
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return Rejection.HEADERS_TOO_LARGE;
        }
        return Rejection.MALFORMED;
    }
}
