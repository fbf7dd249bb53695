package dev.continuum.router.kv.prompt;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Where renders and tokenizations run: never on the caller's thread, at most {@code renderPermits} light jobs and
 * {@code renderPermits} heavy ones at once, each within its deadline.
 *
 * <p>The caller hands a job to the workers through a lock-free queue, at most {@code 6 x renderPermits} jobs
 * queued or running (beyond that the request falls back at once). A worker takes a free permit, or waits for
 * one for what is left of {@code permitWait} (queueing counted), then runs the job with a watchdog armed for
 * the deadline. A job past its deadline gets
 * its future completed with {@code RENDER_UNAVAILABLE}, its permit released and its thread interrupted; the
 * template engine checks the interrupt and the deadline at every node, so the thread stops at its next one.
 *
 * <p>Two lanes: a job that is about to tokenize {@value #HEAVY_CHARS} characters or more natively (a prompt that
 * is mostly new text: tens to hundreds of milliseconds of CPU) calls {@link #beforeTokenizing}, which moves it to
 * a heavy permit (waiting for one at most {@code permitWait}) and gives its light permit back. So a burst of long
 * new prompts holds at most the heavy permits, and a conversation's next turn, whose prompt is mostly cached and
 * costs about a millisecond, is not turned away because long ones hold every permit; the operating system shares
 * the cores between the lanes. A heavy job that finds no heavy permit in time falls back ({@code RENDER_UNAVAILABLE}).
 * There are more workers than permits, so a thread still unwinding a hostile template does not take capacity from
 * the next request: permits, not threads, bound the work.
 */
final class RenderPool extends StartStopSupport {
    /** Room for jinjava's frames at the deepest macro recursion allowed, with a wide margin. */
    private static final long RENDER_STACK_BYTES = 4L << 20;

    private final PromptLimits limits;
    private final LongSupplier nanoTime;
    /**
     * Characters of text to tokenize natively from which a job is heavy: at about four characters a token and half
     * a million tokens a second per core, about 8 ms of CPU.
     */
    static final int HEAVY_CHARS = 16_384;
    /** The job the current worker thread runs (for {@link #beforeTokenizing}); unset on every other thread. */
    private static final ThreadLocal<@Nullable Job> CURRENT = new ThreadLocal<>();

    /** {@code continuum_dynamo_kv_render_pool_busy_total{lane}}: encodes turned away for want of a permit. */
    static final String BUSY = "continuum.dynamo.kv.render.pool.busy";

    private final Semaphore permits;
    private final Semaphore heavyPermits;
    private final Counter lightBusy;
    private final Counter heavyBusy;
    /** Jobs queued or running; bounds the queue, which is unbounded itself so that offering never locks. */
    private final AtomicInteger jobs = new AtomicInteger();
    private final int maxJobs;
    private final AtomicInteger threadNumber = new AtomicInteger();
    private volatile @Nullable ThreadPoolExecutor workers;
    private volatile @Nullable ScheduledThreadPoolExecutor watchdog;

    RenderPool(PromptLimits limits, LongSupplier nanoTime) {
        this(limits, nanoTime, new SimpleMeterRegistry());
    }

    RenderPool(PromptLimits limits, LongSupplier nanoTime, MeterRegistry registry) {
        this.lightBusy = busy(registry, "light");
        this.heavyBusy = busy(registry, "heavy");
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.permits = new Semaphore(limits.renderPermits());
        this.heavyPermits = new Semaphore(limits.renderPermits());
        this.maxJobs = 6 * limits.renderPermits();
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        int threads = 4 * limits.renderPermits();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS,
                new LinkedTransferQueue<>(), r -> daemon(new Thread(null, r,
                        "kv-prompt-render-" + threadNumber.incrementAndGet(), RENDER_STACK_BYTES)));
        pool.prestartAllCoreThreads();
        ScheduledThreadPoolExecutor timer =
                new ScheduledThreadPoolExecutor(1, r -> daemon(new Thread(r, "kv-prompt-deadline")));
        timer.setRemoveOnCancelPolicy(true);
        workers = pool;
        watchdog = timer;
        return CompletableFuture.completedFuture(null);
    }

    private static Counter busy(MeterRegistry registry, String lane) {
        return Counter.builder(BUSY).tag("lane", lane)
                .description("Prompt encodes turned away for want of a render permit, by lane (light: the queue or "
                        + "the permits every job starts with; heavy: the permits of jobs tokenizing long new text)")
                .register(registry);
    }

    private static Thread daemon(Thread t) {
        t.setDaemon(true);
        return t;
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        ThreadPoolExecutor pool = workers;
        ScheduledThreadPoolExecutor timer = watchdog;
        workers = null;
        watchdog = null;
        if (pool != null) {
            pool.shutdownNow();
        }
        if (timer != null) {
            timer.shutdownNow();
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Runs {@code job} (given its deadline on the pool's clock) on a worker; the future completes with its
     * result, or with {@code RENDER_UNAVAILABLE} when no worker or permit is free in time, the deadline passes
     * or the job throws. It never completes exceptionally. {@code finished} runs once when the job has returned
     * or will never run (what the job holds is released then, not at the deadline).
     */
    CompletableFuture<PromptEncoding> submit(long startNanos, LongFunction<PromptEncoding> job, Runnable finished) {
        CompletableFuture<PromptEncoding> result = new CompletableFuture<>();
        ThreadPoolExecutor pool = workers;
        if (pool == null) {
            finished.run();
            result.complete(Fallbacks.RENDER_UNAVAILABLE);
            return result;
        }
        if (jobs.incrementAndGet() > maxJobs) {
            jobs.decrementAndGet();
            lightBusy.increment();
            finished.run();
            result.complete(Fallbacks.RENDER_UNAVAILABLE);
            return result;
        }
        try {
            pool.execute(new Job(job, () -> {
                jobs.decrementAndGet();
                finished.run();
            }, result, startNanos));
        } catch (RejectedExecutionException stopping) {
            jobs.decrementAndGet();
            finished.run();
            result.complete(Fallbacks.RENDER_UNAVAILABLE);
        }
        return result;
    }

    /** Permits free now (tests). */
    int availablePermits() {
        return permits.availablePermits();
    }

    /** Heavy permits free now (tests). */
    int availableHeavyPermits() {
        return heavyPermits.availablePermits();
    }

    /**
     * Called right before {@code chars} characters are tokenized natively. On a worker running a job, text of
     * {@value #HEAVY_CHARS} characters or more moves the job to the heavy lane (once); elsewhere (tests, the load's
     * probes) it does nothing.
     *
     * @throws TemplateFailure when no heavy permit is free within {@code permitWait}, or the job expired meanwhile
     */
    static void beforeTokenizing(int chars) {
        if (chars >= HEAVY_CHARS) {
            Job job = CURRENT.get();
            if (job != null) {
                job.becomeHeavy();
            }
        }
    }

    private final class Job implements Runnable {
        private final LongFunction<PromptEncoding> work;
        private final Runnable finished;
        private final CompletableFuture<PromptEncoding> result;
        private final long startNanos;
        private final AtomicBoolean permitHeld = new AtomicBoolean();
        private final AtomicBoolean heavyHeld = new AtomicBoolean();
        /** Guarded by this: the worker running the job, until it is done with it. */
        private @Nullable Thread runner;

        Job(LongFunction<PromptEncoding> work, Runnable finished, CompletableFuture<PromptEncoding> result,
            long startNanos) {
            this.work = work;
            this.finished = finished;
            this.result = result;
            this.startNanos = startNanos;
        }

        @Override
        public void run() {
            try {
                runUnderPermit();
            } finally {
                finished.run();
            }
        }

        private void runUnderPermit() {
            long now = nanoTime.getAsLong();
            long waitLeft = limits.permitWait().toNanos() - (now - startNanos);
            long deadlineNanos = startNanos + limits.deadline().toNanos();
            try {
                // A free permit is taken even when the hand-off used up the wait (a loaded machine), unless
                // the deadline itself has passed.
                if (now - deadlineNanos >= 0 || (!permits.tryAcquire()
                        && (waitLeft <= 0 || !permits.tryAcquire(waitLeft, TimeUnit.NANOSECONDS)))) {
                    lightBusy.increment();
                    result.complete(Fallbacks.RENDER_UNAVAILABLE);
                    return;
                }
            } catch (InterruptedException stopping) {
                result.complete(Fallbacks.RENDER_UNAVAILABLE);
                return;
            }
            permitHeld.set(true);
            synchronized (this) {
                runner = Thread.currentThread();
            }
            ScheduledFuture<?> timer = arm(deadlineNanos);
            CURRENT.set(this);
            try {
                result.complete(work.apply(deadlineNanos));
            } catch (RuntimeException | LinkageError | StackOverflowError e) {
                result.complete(Fallbacks.RENDER_UNAVAILABLE);
            } finally {
                CURRENT.remove();
                if (timer != null) {
                    timer.cancel(false);
                }
                releasePermits();
                synchronized (this) {
                    runner = null;
                    // an expiry that raced the job's end must not interrupt the worker's next job
                    Thread.interrupted();
                }
            }
        }

        private @Nullable ScheduledFuture<?> arm(long deadlineNanos) {
            ScheduledThreadPoolExecutor timer = watchdog;
            if (timer == null) {
                return null;
            }
            try {
                return timer.schedule(this::expire, deadlineNanos - nanoTime.getAsLong(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException stopping) {
                return null;
            }
        }

        /** The deadline passed with the job still running: answer now, free the permit, stop the thread. */
        private void expire() {
            if (result.complete(Fallbacks.RENDER_UNAVAILABLE)) {
                releasePermits();
                synchronized (this) {
                    Thread t = runner;
                    if (t != null) {
                        t.interrupt();
                    }
                }
            }
        }

        /** Moves this job to the heavy lane: a heavy permit taken (waiting at most permitWait), the light one given back. */
        void becomeHeavy() {
            if (heavyHeld.get()) {
                return;
            }
            boolean taken;
            try {
                taken = heavyPermits.tryAcquire()
                        || heavyPermits.tryAcquire(limits.permitWait().toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException expired) {
                Thread.currentThread().interrupt();
                taken = false;
            }
            if (!taken) {
                heavyBusy.increment();
                throw new TemplateFailure("no heavy render permit free in time");
            }
            heavyHeld.set(true);
            if (result.isDone()) {
                // expired while waiting: the watchdog may have released before the flag was set
                releaseHeavy();
                throw new TemplateFailure("render deadline passed");
            }
            releaseLight();
        }

        private void releasePermits() {
            releaseLight();
            releaseHeavy();
        }

        private void releaseLight() {
            if (permitHeld.compareAndSet(true, false)) {
                permits.release();
            }
        }

        private void releaseHeavy() {
            if (heavyHeld.compareAndSet(true, false)) {
                heavyPermits.release();
            }
        }
    }
}
