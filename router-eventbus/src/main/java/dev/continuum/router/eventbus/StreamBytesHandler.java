package dev.continuum.router.eventbus;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Turns a data stream's HTTP/2 frames into the plain byte stream a TCP handler expects: inbound DATA frames go
 * on as their content (ownership passes to the next handler), the client's end of stream or reset closes the
 * channel; outbound {@link ByteBuf}s leave as DATA frames. The child channel returns flow-control window as the
 * next handler reads, so the router never holds more than the stream's window.
 */
public final class StreamBytesHandler extends ChannelDuplexHandler {
    /** How long a close waits for the client's end of stream after ours before resetting the stream. */
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);

    private final Duration closeTimeout;
    private boolean closing;

    public StreamBytesHandler(Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
    }

    /**
     * A close from our side ends our half first (END_STREAM), so the client sees a clean end and closes its
     * upstream; the stream is reset when the client's end has not arrived within the close timeout.
     */
    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (closing || !ctx.channel().isActive()) {
            ctx.close(promise);
            return;
        }
        closing = true;
        ctx.channel().closeFuture().addListener(f -> promise.trySuccess());
        ctx.writeAndFlush(new DefaultHttp2DataFrame(true));
        ctx.executor().schedule(() -> {
            ctx.close();
        }, closeTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2DataFrame data) {
            boolean end = data.isEndStream();
            ByteBuf content = data.content();
            if (content.isReadable()) {
                ctx.fireChannelRead(content); // the frame's one reference moves on with its content
            } else {
                data.release();
            }
            if (end) {
                ctx.close();
            }
            return;
        }
        boolean end = msg instanceof Http2ResetFrame
                || (msg instanceof Http2HeadersFrame headers && headers.isEndStream());
        ReferenceCountUtil.release(msg);
        if (end) {
            ctx.close();
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf bytes) {
            ctx.write(new DefaultHttp2DataFrame(bytes), promise);
        } else {
            ctx.write(msg, promise);
        }
    }
}
