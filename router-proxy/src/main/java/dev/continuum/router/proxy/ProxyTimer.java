package dev.continuum.router.proxy;

import io.netty.channel.EventLoop;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The time the proxy's per-request timers run on: a monotonic ticker and a way to run a task on an event loop
 * after a delay. {@link #SYSTEM} is {@link System#nanoTime()} and the loop's own scheduler; a test injects a
 * virtual one ({@link ProxyOptions#withTimer}) so a timeout under test fires when the test moves time, not
 * after a real wait. Every timer of {@link RequestTimeouts} (connect, first byte, total, chunk interval) and the
 * retry backoff are scheduled here.
 */
public interface ProxyTimer {
    ProxyTimer SYSTEM = new ProxyTimer() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public Future<?> schedule(EventLoop loop, Runnable task, long delayNanos) {
            return loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
    };

    /** Monotonic nanoseconds. */
    long nanoTime();

    /**
     * Runs {@code task} on {@code loop} once {@code delayNanos} have passed on {@link #nanoTime()}; cancelling the
     * returned future ({@code cancel(false)}) keeps it from running.
     */
    Future<?> schedule(EventLoop loop, Runnable task, long delayNanos);
}
