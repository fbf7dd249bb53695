package dev.continuum.router.core.config;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production {@link TaskScheduler}: one daemon thread, started and stopped through the
 * lifecycle. Stopping drops the tasks still waiting for their delay and lets a running one finish
 * (a reload in progress is not interrupted half-way through reading a file).
 */
final class SingleThreadTaskScheduler extends StartStopSupport implements TaskScheduler {
    private static final Logger log = LoggerFactory.getLogger(SingleThreadTaskScheduler.class);
    private static final long STOP_WAIT_SECONDS = 10;

    private final String threadName;
    private volatile @Nullable ScheduledThreadPoolExecutor executor;

    SingleThreadTaskScheduler(String threadName) {
        this.threadName = threadName;
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        e.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        e.setRemoveOnCancelPolicy(true);
        executor = e;
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() throws InterruptedException {
        ScheduledThreadPoolExecutor e = executor;
        if (e != null) {
            e.shutdown();
            if (!e.awaitTermination(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) {
                log.warn("{} did not finish its task within {}s", threadName, STOP_WAIT_SECONDS);
                e.shutdownNow();
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected String lifecycleName() {
        return threadName;
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        ScheduledThreadPoolExecutor e = executor;
        if (e == null || e.isShutdown()) {
            return () -> { };
        }
        try {
            ScheduledFuture<?> future = e.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
            return () -> { }; // stopping: nothing more runs
        }
    }
}
