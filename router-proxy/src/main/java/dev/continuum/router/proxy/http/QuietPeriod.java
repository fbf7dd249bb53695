package dev.continuum.router.proxy.http;

import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The first phase of a graceful shutdown: readiness is already off and {@code /health} answers 503,
 * but the listeners keep accepting, so a load balancer has time to see the 503 and stop sending
 * before connections are refused. Ends when {@code nanoClock} has advanced by the period; the clock
 * is read on a short poll instead of one timer, so a test's injected clock ends it without waiting.
 */
final class QuietPeriod {
    /** How often the clock is read: a small fraction of any sensible quiet period. */
    static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final EventExecutor executor;
    private final LongSupplier nanoClock;
    private final long periodNanos;
    private final CompletableFuture<Void> over = new CompletableFuture<>();
    private long startNanos;

    QuietPeriod(EventExecutor executor, LongSupplier nanoClock, Duration period) {
        this.executor = executor;
        this.nanoClock = nanoClock;
        this.periodNanos = period.toNanos();
    }

    /** Starts the period; the future completes (on {@code executor}, or at once for a zero period) when it is over. */
    CompletableFuture<Void> start() {
        if (periodNanos <= 0) {
            over.complete(null);
            return over;
        }
        startNanos = nanoClock.getAsLong();
        executor.execute(this::check);
        return over;
    }

    private void check() {
        long left = periodNanos - (nanoClock.getAsLong() - startNanos);
        if (left <= 0) {
            over.complete(null);
            return;
        }
        executor.schedule(this::check, Math.min(left, POLL_NANOS), TimeUnit.NANOSECONDS);
    }
}
