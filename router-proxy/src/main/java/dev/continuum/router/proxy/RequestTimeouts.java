package dev.continuum.router.proxy;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.TimeoutsConfig;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * Every per-phase timeout of one request ({@link TimeoutsConfig}), all on one injected {@link ProxyTimer}:
 * the connect bound ({@code timeouts.connection}, {@link #boundConnect}), each attempt's first-byte timer until
 * its response head, then the total bound of a plain answer ({@code request.standard.total}) or of a stream
 * ({@code request.streaming.total}), and a stream's {@code chunk_interval} ({@link ChunkWatchdog}). The attempt
 * owns its armed timer ({@link Attempt#timeout}), so it dies with the attempt; this piece decides which bound
 * applies and for how long. Runs on the exchange's event loop.
 */
final class RequestTimeouts {
    /** What the exchange hears when a bound is crossed; called on its event loop. */
    interface Expiry {
        /** {@code attempt}'s first-byte or total bound passed (the attempt may be stale by then). */
        void onTimeout(Attempt attempt);

        /** The relayed stream was silent for {@code chunk_interval}. */
        void onChunkSilence();
    }

    private final ProxyTimer timer;
    private final EventLoop loop;
    private final RouterConfig config;
    private final Expiry expiry;
    /** The bound the current attempt's timer was armed with (the 504 names it). */
    private Duration armed = Duration.ZERO;
    /** When the current attempt's first-byte timer was armed, on {@link #timer}'s ticker. */
    private long attemptStart;
    private @Nullable ChunkWatchdog watchdog;

    RequestTimeouts(ProxyTimer timer, EventLoop loop, RouterConfig config, Expiry expiry) {
        this.timer = timer;
        this.loop = loop;
        this.config = config;
        this.expiry = expiry;
    }

    /**
     * Fails {@code connect} with a {@link ConnectTimeoutException} (and closes its channel) unless it completes
     * within {@code limit}: Netty's own connect timer would not run on the injected time.
     */
    static void boundConnect(ProxyTimer timer, EventLoop loop, ChannelFuture connect, Duration limit) {
        if (connect.isDone()) {
            return;
        }
        Future<?> t = timer.schedule(loop, () -> {
            if (connect instanceof ChannelPromise p && p.tryFailure(
                    new ConnectTimeoutException("connection timed out after " + limit.toMillis() + " ms"))) {
                connect.channel().close();
            }
        }, limit.toNanos());
        connect.addListener(done -> t.cancel(false));
    }

    /** Arms {@code a}'s first-byte timer, as its request is about to go out. */
    void firstByte(Attempt a, boolean stream) {
        attemptStart = timer.nanoTime();
        arm(a, config.timeouts().firstByte(stream, a.backend.config(), config.server()));
    }

    /**
     * The head is going to the client: the first-byte timer is done. A stream gets its chunk watchdog and its total
     * bound (if any); a plain answer keeps its total bound (re-armed when the first byte had a shorter one). Both
     * totals count from the attempt's start.
     */
    void afterHead(Attempt a, boolean streaming) {
        TimeoutsConfig to = config.timeouts();
        Duration total = to.total(streaming, a.backend.config(), config.server());
        if (streaming || (total != null && total.compareTo(armed) != 0)) {
            a.cancelTimeout();
            if (total != null) {
                long left = total.toNanos() - (timer.nanoTime() - attemptStart);
                arm(a, Duration.ofNanos(Math.max(1, left)));
                armed = total;
            }
        }
        Duration chunk = to.chunkInterval();
        if (streaming && chunk != null) {
            ChunkWatchdog w = new ChunkWatchdog(timer, loop, chunk.toNanos(), expiry::onChunkSilence);
            watchdog = w;
            w.start();
        }
    }

    private void arm(Attempt a, Duration t) {
        armed = t;
        a.timeout(timer.schedule(loop, () -> expiry.onTimeout(a), t.toNanos()));
    }

    /** A chunk of the relayed stream arrived. */
    void chunk() {
        ChunkWatchdog w = watchdog;
        if (w != null) {
            w.touch();
        }
    }

    /** The bound the last timer was armed with, in milliseconds. */
    long armedMillis() {
        return armed.toMillis();
    }

    /** The request ended: the stream's watchdog stops (the attempt's own timer goes with the attempt). */
    void stop() {
        ChunkWatchdog w = watchdog;
        if (w != null) {
            w.stop();
            watchdog = null;
        }
    }
}
