package dev.continuum.router.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slow-header guard: a client must finish a request head within {@code header_read_timeout},
 * counted from the connection's start and, on a keep-alive connection, from the first byte of each
 * later request (waiting between requests is the idle timeout's business). Sits before the codec
 * and sees raw bytes; {@link RequestHeadGuardHandler} reports decoded heads and request ends.
 * On expiry the connection is closed without an answer. Buffers: forwards everything untouched.
 */
final class HeaderReadTimeoutHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(HeaderReadTimeoutHandler.class);

    private final long timeoutNanos;
    private @Nullable ChannelHandlerContext ctx;
    private @Nullable ScheduledFuture<?> timer;
    private boolean awaitingHead = true;
    private boolean receiving;

    HeaderReadTimeoutHandler(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (timer == null && awaitingHead) {
            start();
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b && b.isReadable()) {
            receiving = true;
            if (awaitingHead && timer == null) {
                start();
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
    }

    /** A request head was decoded. */
    void headReceived() {
        awaitingHead = false;
        cancel();
    }

    /** A request ended; the next head is due from its first byte. */
    void requestComplete() {
        awaitingHead = true;
        receiving = false;
    }

    /** Bytes of a request arrived that have not yet formed a whole request. */
    boolean receiving() {
        return receiving;
    }

    private void start() {
        ChannelHandlerContext c = ctx;
        if (c == null || timeoutNanos <= 0) {
            return;
        }
        timer = c.executor().schedule(this::expire, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void cancel() {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
            timer = null;
        }
    }

    private void expire() {
        timer = null;
        ChannelHandlerContext c = ctx;
        if (awaitingHead && c != null) {
            log.debug("closing {}: request head not received within the header read timeout", c.channel());
            c.close();
        }
    }
}
