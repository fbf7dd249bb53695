package dev.continuum.router.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slow-header guard: a client must finish a request head within {@code header_read_timeout},
 * counted from the connection's start and, on a keep-alive connection, from the first byte of each
 * later request (waiting between requests is the idle timeout's business). Sits before the codec
 * and sees raw bytes; {@link RequestHeadGuardHandler} reports decoded heads and request ends.
 * On expiry the connection is closed without an answer. Buffers: forwards everything untouched.
 *
 * <p>The timer is lazy, because a busy keep-alive connection starts a head thousands of times a
 * second: a finished head does not cancel it, and when it fires it looks at the head being read
 * now, if any, and re-arms for that head's deadline. So a connection schedules at most one task
 * per timeout period instead of one per request.
 */
final class HeaderReadTimeoutHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(HeaderReadTimeoutHandler.class);

    private final long timeoutNanos;
    private final LongSupplier nanoClock;
    private @Nullable ChannelHandlerContext ctx;
    private @Nullable ScheduledFuture<?> timer;
    /** A head is due: from the connection's start, or from the first byte of a later request. */
    private boolean headDue;
    private long headStartNanos;
    private boolean awaitingHead = true;
    private boolean receiving;

    /** {@code nanoClock} decides whether a head is late (injected by tests); the timer only wakes the check. */
    HeaderReadTimeoutHandler(long timeoutNanos, LongSupplier nanoClock) {
        this.timeoutNanos = timeoutNanos;
        this.nanoClock = nanoClock;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            headStarted();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!headDue && awaitingHead) {
            headStarted();
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b && b.isReadable()) {
            receiving = true;
            if (awaitingHead && !headDue) {
                headStarted();
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        headDue = false;
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
            timer = null;
        }
        ctx.fireChannelInactive();
    }

    /** A request head was decoded. */
    void headReceived() {
        awaitingHead = false;
        headDue = false; // the pending timer, if any, finds nothing due and lapses
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

    private void headStarted() {
        if (timeoutNanos <= 0) {
            return;
        }
        headDue = true;
        headStartNanos = nanoClock.getAsLong();
        if (timer == null) {
            arm(timeoutNanos);
        }
    }

    private void arm(long delayNanos) {
        ChannelHandlerContext c = ctx;
        if (c != null) {
            timer = c.executor().schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void check() {
        timer = null;
        ChannelHandlerContext c = ctx;
        if (!headDue || c == null) {
            return;
        }
        long left = timeoutNanos - (nanoClock.getAsLong() - headStartNanos);
        if (left > 0) {
            arm(left); // a later head than the one this timer was armed for, or a clock behind the timer
            return;
        }
        log.debug("closing {}: request head not received within the header read timeout", c.channel());
        c.close();
    }
}
