package dev.continuum.router.eventbus;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/** Releases whatever a refused stream still receives. */
@ChannelHandler.Sharable
final class DiscardHandler extends ChannelInboundHandlerAdapter {
    static final DiscardHandler INSTANCE = new DiscardHandler();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
