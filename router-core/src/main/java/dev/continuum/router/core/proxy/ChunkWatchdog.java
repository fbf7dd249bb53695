package dev.continuum.router.core.proxy;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code timeouts.request.streaming.chunk_interval}: cuts a relayed stream whose upstream stays silent longer
 * than the interval between two chunks. One timer per stream, not one per chunk: each chunk only records its
 * time, and when the timer fires it either reports the silence or re-arms for what is left of the interval.
 * Runs on the exchange's event loop; the time comes from the proxy's (injectable) monotonic clock.
 */
final class ChunkWatchdog {
    private final EventLoop loop;
    private final LongSupplier nanoClock;
    private final long intervalNanos;
    private final Runnable onSilence;
    private long lastNanos;
    private @Nullable ScheduledFuture<?> timer;
    private boolean stopped;

    ChunkWatchdog(EventLoop loop, LongSupplier nanoClock, long intervalNanos, Runnable onSilence) {
        this.loop = loop;
        this.nanoClock = nanoClock;
        this.intervalNanos = intervalNanos;
        this.onSilence = onSilence;
    }

    void start() {
        lastNanos = nanoClock.getAsLong();
        arm(intervalNanos);
    }

    /** A chunk arrived. */
    void touch() {
        lastNanos = nanoClock.getAsLong();
    }

    void stop() {
        stopped = true;
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
            timer = null;
        }
    }

    private void arm(long delayNanos) {
        timer = loop.schedule(this::check, Math.max(1, delayNanos), TimeUnit.NANOSECONDS);
    }

    private void check() {
        timer = null;
        if (stopped) {
            return;
        }
        long silent = nanoClock.getAsLong() - lastNanos;
        if (silent >= intervalNanos) {
            stopped = true;
            onSilence.run();
        } else {
            arm(intervalNanos - silent);
        }
    }
}
