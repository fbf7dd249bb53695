package dev.continuum.router.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The last handler of every upstream connection. While an exchange owns the connection it hands
 * each decoded message to that exchange's {@link UpstreamListener} (which then owns the message);
 * while the connection sits idle in the pool there is no listener, and any data or idle timeout
 * closes it: an idle keep-alive connection must stay silent. An idle timeout during an exchange is
 * reported to the exchange, which decides. Buffers: releases what arrives with
 * no listener; forwards everything else to the listener without touching it.
 */
final class UpstreamHandler extends ChannelInboundHandlerAdapter {
    static final String NAME = "upstream";

    /** Only touched on the connection's event loop. */
    private @Nullable UpstreamListener listener;

    void attach(UpstreamListener l) {
        this.listener = l;
    }

    void detach() {
        this.listener = null;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        UpstreamListener l = listener;
        if (l != null) {
            l.onUpstreamMessage(msg);
        } else {
            ReferenceCountUtil.release(msg);
            ctx.close();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        UpstreamListener l = listener;
        if (l != null) {
            l.onUpstreamReadComplete();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        UpstreamListener l = listener;
        listener = null;
        if (l != null) {
            l.onUpstreamClosed();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            UpstreamListener l = listener;
            if (l == null) {
                ctx.close();
            } else {
                l.onUpstreamIdle();
            }
            return;
        }
        ReferenceCountUtil.release(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        UpstreamListener l = listener;
        if (l != null) {
            l.onUpstreamError(cause);
        }
        ctx.close();
    }
}
