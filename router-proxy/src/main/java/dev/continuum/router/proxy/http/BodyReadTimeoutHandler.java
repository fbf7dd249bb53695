package dev.continuum.router.proxy.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code body_read_timeout}: a request body must arrive whole within this, counted from its head.
 * The idle timeout alone cannot bound a body, because every byte restarts it: a client trickling one
 * byte every few seconds would hold its connection and its buffered bytes forever. The deadline is
 * checked on each body chunk (a trickle keeps producing chunks), so no timer is armed per request; a
 * body that stops altogether is refused at the next idle-timeout event instead of being closed as
 * idle. Either way the client gets 408 ({@link Rejection#BODY_READ_TIMEOUT}) and the connection
 * closes. Buffers: releases the refused chunk and everything after it; forwards the rest.
 */
final class BodyReadTimeoutHandler extends ChannelInboundHandlerAdapter {
    private final long timeoutNanos;
    private final LongSupplier nanoClock;
    private long headNanos;
    private boolean inBody;
    private boolean discarding;
    private @Nullable HttpMethod method;
    private @Nullable String uri;

    BodyReadTimeoutHandler(long timeoutNanos, LongSupplier nanoClock) {
        this.timeoutNanos = timeoutNanos;
        this.nanoClock = nanoClock;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (discarding) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest req) {
            method = req.method();
            uri = req.uri();
            inBody = !(msg instanceof LastHttpContent);
            headNanos = nanoClock.getAsLong();
        } else if (msg instanceof HttpContent && inBody) {
            if (nanoClock.getAsLong() - headNanos > timeoutNanos) {
                reject(ctx, msg);
                return;
            }
            if (msg instanceof LastHttpContent) {
                inBody = false;
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        // Reading paused by the router (a pipelined request waits its turn) is not a stalled client.
        if (evt instanceof IdleStateEvent && inBody && !discarding && ctx.channel().config().isAutoRead()) {
            reject(ctx, null); // a body that stopped arriving: answered, not just dropped
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void reject(ChannelHandlerContext ctx, @Nullable Object msg) {
        discarding = true;
        inBody = false;
        if (msg != null) {
            ReferenceCountUtil.release(msg);
        }
        ctx.fireChannelRead(new RejectedRequest(Rejection.BODY_READ_TIMEOUT, method, uri));
    }
}
