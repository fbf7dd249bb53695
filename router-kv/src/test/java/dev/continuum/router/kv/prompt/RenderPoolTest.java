package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The render pool's admission, deadline and lanes, with jobs that block on purpose (one permit a lane, so one job fills
 * it).
 */
class RenderPoolTest {
    private static RenderPool pool(Duration deadline) {
        PromptLimits d = PromptLimits.defaults();
        RenderPool pool = new RenderPool(new PromptLimits(1, Duration.ofMillis(20), deadline, d.renderBudget(),
                d.renderHeapBytes(), d.maxBodyBytes(), d.maxJsonDepth(), d.maxRenderedBytes(), d.maxTokens(),
                d.maxMacroDepth(), d.maxTokenizers(), d.concurrentLoads(), d.maxArtifactBytes(), d.loadRetry()),
                System::nanoTime);
        pool.start().join();
        return pool;
    }

    @Test
    void aRequestFindingNoPermitWithinThePermitWaitFallsBackAndItsResourcesAreReleased() throws Exception {
        RenderPool pool = pool(Duration.ofSeconds(30));
        try {
            CountDownLatch hold = new CountDownLatch(1);
            CountDownLatch running = new CountDownLatch(1);
            CompletableFuture<PromptEncoding> first = pool.submit(System.nanoTime(), deadline -> {
                running.countDown();
                try {
                    hold.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return new PromptEncoding.Tokens(new int[] {7});
            }, () -> { });
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            AtomicInteger finished = new AtomicInteger();
            PromptEncoding second = pool.submit(System.nanoTime(), deadline -> new PromptEncoding.Tokens(new int[0]),
                    finished::incrementAndGet).get(10, TimeUnit.SECONDS);
            assertThat(second).isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
            // The release callback may run just after the answer completes, on the pool's thread.
            await().atMost(Duration.ofSeconds(10)).until(() -> finished.get() == 1);

            hold.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS)).isInstanceOf(PromptEncoding.Tokens.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.availablePermits() == 1);
        } finally {
            pool.stop().join();
        }
    }

    @Test
    void aJobPastItsDeadlineIsAnsweredInterruptedAndGivesItsPermitBack() throws Exception {
        RenderPool pool = pool(Duration.ofMillis(300));
        try {
            AtomicBoolean interrupted = new AtomicBoolean();
            CountDownLatch jobReturned = new CountDownLatch(1);
            CompletableFuture<PromptEncoding> stuck = pool.submit(System.nanoTime(), deadline -> {
                try {
                    new CountDownLatch(1).await(30, TimeUnit.SECONDS); // stands for a render that never ends
                } catch (InterruptedException e) {
                    interrupted.set(true);
                }
                return new PromptEncoding.Tokens(new int[] {1});
            }, jobReturned::countDown);
            assertThat(stuck.get(10, TimeUnit.SECONDS)).isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
            assertThat(jobReturned.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(interrupted).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.availablePermits() == 1);
            // no worker carries the expired job's interrupt into its next job
            AtomicBoolean sawInterrupt = new AtomicBoolean(true);
            assertThat(pool.submit(System.nanoTime(), deadline -> {
                sawInterrupt.set(Thread.currentThread().isInterrupted());
                return new PromptEncoding.Tokens(new int[] {2});
            }, () -> { }).get(10, TimeUnit.SECONDS)).isInstanceOf(PromptEncoding.Tokens.class);
            assertThat(sawInterrupt).isFalse();
        } finally {
            pool.stop().join();
        }
    }

    /** A job that announces {@code chars} of native tokenizing, then blocks until {@code hold} opens. */
    private static java.util.function.LongFunction<PromptEncoding> tokenizing(int chars, CountDownLatch running,
            CountDownLatch hold) {
        return deadline -> {
            RenderPool.beforeTokenizing(chars);
            running.countDown();
            try {
                hold.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new PromptEncoding.Tokens(new int[] {chars});
        };
    }

    @Test
    void aHeavyJobMovesToTheHeavyLaneSoACheapJobStillFindsAPermit() throws Exception {
        RenderPool pool = pool(Duration.ofSeconds(30));
        try {
            CountDownLatch hold = new CountDownLatch(1);
            CountDownLatch heavyRunning = new CountDownLatch(1);
            CompletableFuture<PromptEncoding> heavy = pool.submit(System.nanoTime(),
                    tokenizing(RenderPool.HEAVY_CHARS, heavyRunning, hold), () -> { });
            assertThat(heavyRunning.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(pool.availableHeavyPermits()).isZero();
            assertThat(pool.availablePermits()).isEqualTo(1); // its light permit was given back

            // A cheap job (a conversation's next turn, mostly cached) runs beside it.
            PromptEncoding cheap = pool.submit(System.nanoTime(),
                    tokenizing(RenderPool.HEAVY_CHARS - 1, new CountDownLatch(1), new CountDownLatch(0)), () -> { })
                    .get(10, TimeUnit.SECONDS);
            assertThat(cheap).isInstanceOfSatisfying(PromptEncoding.Tokens.class,
                    t -> assertThat(t.ids()).containsExactly(RenderPool.HEAVY_CHARS - 1));

            // A second heavy job finds the heavy lane full for the permit wait and falls back, releasing its light permit.
            PromptEncoding second = pool.submit(System.nanoTime(),
                    tokenizing(2 * RenderPool.HEAVY_CHARS, new CountDownLatch(1), new CountDownLatch(0)), () -> { })
                    .get(10, TimeUnit.SECONDS);
            assertThat(second).isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.availablePermits() == 1);

            hold.countDown();
            assertThat(heavy.get(10, TimeUnit.SECONDS)).isInstanceOf(PromptEncoding.Tokens.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.availableHeavyPermits() == 1);
        } finally {
            pool.stop().join();
        }
    }

    @Test
    void aHeavyJobPastItsDeadlineGivesItsHeavyPermitBack() throws Exception {
        RenderPool pool = pool(Duration.ofMillis(300));
        try {
            CountDownLatch running = new CountDownLatch(1);
            PromptEncoding stuck = pool.submit(System.nanoTime(),
                    tokenizing(RenderPool.HEAVY_CHARS, running, new CountDownLatch(1)), () -> { })
                    .get(10, TimeUnit.SECONDS);
            assertThat(stuck).isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> pool.availableHeavyPermits() == 1 && pool.availablePermits() == 1);
        } finally {
            pool.stop().join();
        }
    }

    @Test
    void outsideThePoolAnnouncingHeavyWorkDoesNothing() {
        RenderPool.beforeTokenizing(Integer.MAX_VALUE); // the load's probes, tests: no job, no lane
    }
}
