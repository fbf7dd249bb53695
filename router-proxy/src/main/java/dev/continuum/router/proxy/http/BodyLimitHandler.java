package dev.continuum.router.proxy.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * Enforces {@code max_request_body_size} before anything buffers the body: a
 * {@code Content-Length} over the limit is refused from the head alone (so an
 * {@code Expect: 100-continue} client never gets its 100 and never sends the body), and a body
 * without a length is counted as it streams in. A refused request becomes a
 * {@link RejectedRequest} (413) and the rest of the connection's input is discarded.
 * Buffers: releases discarded messages; forwards the rest.
 */
final class BodyLimitHandler extends ChannelInboundHandlerAdapter {
    private final long maxBytes;
    private long received;
    private @Nullable HttpMethod method;
    private @Nullable String uri;
    private boolean discarding;

    BodyLimitHandler(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (discarding) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest req) {
            received = 0;
            method = req.method();
            uri = req.uri();
            long declared;
            try {
                declared = HttpUtil.getContentLength(req, -1L);
            } catch (NumberFormatException e) {
                declared = -1L; // the decoder validates lengths; a bad one never gets this far
            }
            if (declared > maxBytes) {
                reject(ctx, msg);
                return;
            }
        }
        if (msg instanceof HttpContent c) {
            received += c.content().readableBytes();
            if (received > maxBytes) {
                reject(ctx, msg);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    private void reject(ChannelHandlerContext ctx, Object msg) {
        discarding = true;
        ReferenceCountUtil.release(msg);
        ctx.fireChannelRead(new RejectedRequest(Rejection.BODY_TOO_LARGE, method, uri));
    }
}
