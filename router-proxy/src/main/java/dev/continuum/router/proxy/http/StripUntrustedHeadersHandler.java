package dev.continuum.router.proxy.http;

import dev.continuum.router.proxy.UntrustedHeaders;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;

/**
 * The trust boundary (Zuul's {@code StripUntrustedProxyHeadersHandler}): removes every client
 * {@code x-dynamo-*} header and upstream's older pinning aliases from each request head before
 * any later handler or route reads them, on every route. Stateless and shared. Buffers: forwards
 * every message untouched (headers are not reference-counted).
 */
@ChannelHandler.Sharable
final class StripUntrustedHeadersHandler extends ChannelInboundHandlerAdapter {
    static final StripUntrustedHeadersHandler INSTANCE = new StripUntrustedHeadersHandler();

    private StripUntrustedHeadersHandler() {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest req) {
            UntrustedHeaders.strip(req.headers());
        }
        ctx.fireChannelRead(msg);
    }
}
