package dev.continuum.router.proxy;

import io.netty.channel.EventLoop;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * {@code timeouts.request.streaming.chunk_interval}: cuts a relayed stream whose upstream stays silent longer
 * than the interval between two chunks. One timer per stream, not one per chunk: each chunk only records its
 * time, and when the timer fires it either reports the silence or re-arms for what is left of the interval.
 * Runs on the exchange's event loop; time and timer come from the proxy's (injectable) {@link ProxyTimer}.
 */
final class ChunkWatchdog {
    private final ProxyTimer timer;
    private final EventLoop loop;
    private final long intervalNanos;
    private final Runnable onSilence;
    private long lastNanos;
    private @Nullable Future<?> pending;
    private boolean stopped;

    ChunkWatchdog(ProxyTimer timer, EventLoop loop, long intervalNanos, Runnable onSilence) {
        this.timer = timer;
        this.loop = loop;
        this.intervalNanos = intervalNanos;
        this.onSilence = onSilence;
    }

    void start() {
        lastNanos = timer.nanoTime();
        arm(intervalNanos);
    }

    /** A chunk arrived. */
    void touch() {
        lastNanos = timer.nanoTime();
    }

    void stop() {
        stopped = true;
        Future<?> t = pending;
        if (t != null) {
            t.cancel(false);
            pending = null;
        }
    }

    private void arm(long delayNanos) {
        pending = timer.schedule(loop, this::check, Math.max(1, delayNanos));
    }

    private void check() {
        pending = null;
        if (stopped) {
            return;
        }
        long silent = timer.nanoTime() - lastNanos;
        if (silent >= intervalNanos) {
            stopped = true;
            onSilence.run();
        } else {
            arm(intervalNanos - silent);
        }
    }
}
