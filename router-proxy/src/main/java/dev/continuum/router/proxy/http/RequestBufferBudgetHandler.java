package dev.continuum.router.proxy.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The global bound on buffered request bodies, right before aggregation: every body byte a connection
 * reads is reserved in the server-wide count until the request's response ends (or the connection
 * closes), and a request that would take the count over {@code max_buffered_request_size} is refused
 * with 503 ({@link Rejection#BUFFERS_FULL}) instead of being read into memory, from its
 * {@code Content-Length} when it has one. A connection over {@code max_connections} is built with
 * {@code refuse} set: its first request gets 503 ({@link Rejection#CONNECTION_LIMIT}) without its body
 * being buffered. Reservation is a lock-free add on the shared counter.
 * Buffers: releases refused and discarded messages; forwards the rest.
 */
final class RequestBufferBudgetHandler extends ChannelInboundHandlerAdapter {
    private final AtomicLong global;
    private final long budget;
    private final boolean refuse;
    /** Bytes of the request being read now. */
    private long assembling;
    /** Bytes of whole requests read and not yet answered. */
    private long held;
    private @Nullable HttpMethod method;
    private @Nullable String uri;
    private boolean discarding;
    private boolean inactive;

    RequestBufferBudgetHandler(AtomicLong global, long budget, boolean refuse) {
        this.global = global;
        this.budget = budget;
        this.refuse = refuse;
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
            if (refuse) {
                reject(ctx, msg, Rejection.CONNECTION_LIMIT);
                return;
            }
            long declared = declaredLength(req);
            if (declared > 0 && global.get() + declared > budget) {
                reject(ctx, msg, Rejection.BUFFERS_FULL);
                return;
            }
        }
        if (msg instanceof HttpContent c) {
            int n = c.content().readableBytes();
            if (n > 0) {
                if (global.addAndGet(n) > budget) {
                    global.addAndGet(-n);
                    reject(ctx, msg, Rejection.BUFFERS_FULL);
                    return;
                }
                assembling += n;
            }
            if (msg instanceof LastHttpContent) {
                held += assembling;
                assembling = 0;
            }
        }
        ctx.fireChannelRead(msg);
    }

    private static long declaredLength(HttpRequest req) {
        try {
            return HttpUtil.getContentLength(req, -1L);
        } catch (NumberFormatException e) {
            return -1L; // the decoder validates lengths; a bad one never gets this far
        }
    }

    /** A request of {@code bodyBytes} was answered: its body no longer counts. */
    void release(long bodyBytes) {
        if (inactive || bodyBytes <= 0) {
            return;
        }
        long n = Math.min(bodyBytes, held);
        held -= n;
        global.addAndGet(-n);
    }

    /** The request being read was refused and its partial body freed (the aggregator removed): it no longer counts. */
    void dropAssembling() {
        if (inactive || assembling == 0) {
            return;
        }
        global.addAndGet(-assembling);
        assembling = 0;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        inactive = true;
        global.addAndGet(-(held + assembling));
        held = 0;
        assembling = 0;
        ctx.fireChannelInactive();
    }

    private void reject(ChannelHandlerContext ctx, Object msg, Rejection reason) {
        discarding = true;
        ReferenceCountUtil.release(msg);
        ctx.fireChannelRead(new RejectedRequest(reason, method, uri));
    }
}
