package dev.continuum.router.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Lingering close after an early answer: a refusal sent while the client may still be uploading (413, 408,
 * 503, a framing 400...). Closing a socket whose receive queue holds unread bytes makes the kernel send a reset,
 * and a client still writing its body then gets a broken pipe and never reads the answer. So after the answer is
 * flushed the router half-closes (the client sees the end of the answer), keeps reading and discarding the rest
 * of the request, and closes when the first of these comes: the refused request's last byte (by its own framing),
 * the client's close, {@link IngressLimits#lingerBytes} drained, or {@link IngressLimits#lingerTime} after the
 * answer. A request that was already read whole is closed as soon as its answer is flushed.
 *
 * <p>Two pipeline roles share this state: this handler sits first (before the codec) and counts raw bytes while
 * draining; {@link #requestEnds()} sits right after the codec, tracks where the current request ends (one
 * type check per message) and, while draining, swallows every decoded message. Memory stays bounded: reading
 * stays on, every buffer is released on arrival, nothing aggregates. Buffers: releases what it swallows.
 */
final class LingeringClose extends ChannelInboundHandlerAdapter {
    private final long timeNanos;
    private final long maxBytes;
    private final RequestEnds ends = new RequestEnds();
    /** Inside a request (head read, its last content not yet). */
    private boolean open;
    /** The input can no longer be framed (a decoder failure, or a head refused for its framing). */
    private boolean unframed;
    /** An early answer was decided: every later input is discarded. */
    private boolean draining;
    /** The early answer was flushed. */
    private boolean answered;
    private long drained;

    /**
     * @param timeNanos the longest drain after the answer is flushed
     * @param maxBytes  the most bytes drained before the connection is closed regardless
     */
    LingeringClose(long timeNanos, long maxBytes) {
        this.timeNanos = timeNanos;
        this.maxBytes = maxBytes;
    }

    /** The handler after the codec that tracks request ends and swallows decoded input while draining. */
    ChannelHandler requestEnds() {
        return ends;
    }

    /** The refused head's framing is not trusted: drain until the client closes or a bound is reached. */
    void unframed() {
        unframed = true;
    }

    /**
     * An early answer is being written with {@code write}: from now on input is discarded, and once the write
     * is flushed the connection closes at the request's end or a bound (see the class comment).
     */
    void closeAfter(ChannelFuture write) {
        Channel ch = write.channel();
        draining = true;
        ch.config().setAutoRead(true); // reading may have been paused for pipelining: keep draining
        write.addListener(f -> {
            answered = true;
            if (!f.isSuccess() || !ch.isActive() || requestRead() || !(ch instanceof DuplexChannel d)) {
                ch.close();
                return;
            }
            d.shutdownOutput();
            ScheduledFuture<?> t = ch.eventLoop().schedule(() -> {
                ch.close();
            }, timeNanos, TimeUnit.NANOSECONDS);
            ch.closeFuture().addListener(c -> t.cancel(false));
        });
    }

    private boolean requestRead() {
        return !open && !unframed;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (draining && msg instanceof ByteBuf b) {
            drained += b.readableBytes();
            if (drained > maxBytes) {
                b.release();
                ctx.close();
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    /** Decoded messages: tracks where the request ends; while draining, swallows them and closes at the end. */
    private final class RequestEnds extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
                unframed = true;
            } else if (msg instanceof HttpRequest) {
                open = !(msg instanceof LastHttpContent);
            } else if (msg instanceof LastHttpContent) {
                open = false;
            }
            if (!draining) {
                ctx.fireChannelRead(msg);
                return;
            }
            ReferenceCountUtil.release(msg);
            if (answered && requestRead()) {
                ctx.close(); // the refused request is read to its end: nothing is left to reset
            }
        }
    }
}
