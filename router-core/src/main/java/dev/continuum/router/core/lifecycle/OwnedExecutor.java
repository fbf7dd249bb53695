package dev.continuum.router.core.lifecycle;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread pool as a {@link Lifecycle} component, so that it has an owner that stops it: the threads
 * (named {@code prefix-N}, daemon) exist from {@link #start()} and are gone when {@link #stop()}'s
 * future completes. Stopping lets queued tasks (and, for a scheduler, already-scheduled delayed
 * tasks) run, waits up to the termination grace, then interrupts what is left.
 */
public final class OwnedExecutor extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(OwnedExecutor.class);
    /** How long stop waits for queued tasks before interrupting them. */
    public static final Duration TERMINATION_GRACE = Duration.ofSeconds(5);

    private final String prefix;
    private final Function<ThreadFactory, ExecutorService> factory;
    private final Duration terminationGrace;
    private volatile @Nullable ExecutorService executor;

    private OwnedExecutor(String prefix, Function<ThreadFactory, ExecutorService> factory, Duration terminationGrace) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.factory = factory;
        if (terminationGrace.isNegative()) {
            throw new IllegalArgumentException("terminationGrace: " + terminationGrace + " (expected: >= 0)");
        }
        this.terminationGrace = terminationGrace;
    }

    /** {@code threads} fixed threads for blocking work. */
    public static OwnedExecutor fixed(String prefix, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads: " + threads + " (expected: >= 1)");
        }
        return new OwnedExecutor(prefix, tf -> Executors.newFixedThreadPool(threads, tf), TERMINATION_GRACE);
    }

    /** One scheduler thread; delayed tasks scheduled before the stop still run (after their delay). */
    public static OwnedExecutor scheduler(String prefix, Duration terminationGrace) {
        return new OwnedExecutor(prefix, tf -> {
            ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, tf);
            s.setExecuteExistingDelayedTasksAfterShutdownPolicy(true);
            s.setRemoveOnCancelPolicy(true);
            return s;
        }, terminationGrace);
    }

    /** The running pool; only between start and stop. */
    public ExecutorService executor() {
        ExecutorService e = executor;
        if (e == null) {
            throw new IllegalStateException(prefix + ": not started");
        }
        return e;
    }

    /** The running scheduler, for an executor made by {@link #scheduler}. */
    public ScheduledExecutorService scheduledExecutor() {
        if (executor() instanceof ScheduledExecutorService s) {
            return s;
        }
        throw new IllegalStateException(prefix + ": not a scheduler");
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        AtomicInteger n = new AtomicInteger();
        executor = factory.apply(r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        ExecutorService e = executor;
        if (e == null) {
            return CompletableFuture.completedFuture(null);
        }
        e.shutdown();
        if (e.isTerminated()) {
            return CompletableFuture.completedFuture(null);
        }
        // Waiting blocks: on a short-lived thread of its own, never the caller's (it may be an event loop).
        CompletableFuture<Void> terminated = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                if (!e.awaitTermination(terminationGrace.toNanos(), TimeUnit.NANOSECONDS)) {
                    LOG.warn("{}: tasks still running after {}; interrupting them", prefix, terminationGrace);
                    e.shutdownNow();
                    e.awaitTermination(terminationGrace.toNanos(), TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException interrupted) {
                e.shutdownNow();
                Thread.currentThread().interrupt();
            } finally {
                terminated.complete(null);
            }
        }, prefix + "-stop");
        waiter.setDaemon(true);
        waiter.start();
        return terminated;
    }

    @Override
    protected String lifecycleName() {
        return prefix + " threads";
    }
}
