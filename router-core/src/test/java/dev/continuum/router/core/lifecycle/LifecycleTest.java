package dev.continuum.router.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import dev.continuum.router.testing.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LifecycleTest {

    /** Records its transitions in a shared journal; fails its start when told to. */
    private static final class Recording extends StartStopSupport {
        private final String name;
        private final List<String> journal;
        private final boolean failStart;
        int stops;

        Recording(String name, List<String> journal, boolean failStart) {
            this.name = name;
            this.journal = journal;
            this.failStart = failStart;
        }

        @Override
        protected CompletableFuture<Void> doStart() {
            journal.add("start " + name);
            return failStart
                    ? CompletableFuture.failedFuture(new IllegalStateException(name + " cannot bind"))
                    : CompletableFuture.completedFuture(null);
        }

        @Override
        protected String lifecycleName() {
            return name;
        }

        @Override
        protected CompletableFuture<Void> doStop() {
            stops++;
            journal.add("stop " + name);
            return CompletableFuture.completedFuture(null);
        }
    }

    @Test
    void movesForwardThroughItsStatesAndStopsOnce() {
        List<String> journal = new ArrayList<>();
        Recording c = new Recording("a", journal, false);
        assertThat(c.state()).isEqualTo(LifecycleState.NEW);
        c.start().join();
        assertThat(c.state()).isEqualTo(LifecycleState.STARTED);
        assertThat(c.start()).isSameAs(c.start());
        CompletableFuture<Void> first = c.stop();
        assertThat(c.stop()).isSameAs(first);
        first.join();
        assertThat(c.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(c.stops).isEqualTo(1);
        assertThat(c.start()).isCompletedExceptionally();
    }

    @Test
    void stoppingANeverStartedComponentReleasesNothing() {
        Recording c = new Recording("a", new ArrayList<>(), false);
        c.stop().join();
        assertThat(c.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(c.stops).isZero();
    }

    @Test
    void aFailedStartReleasesWhatItAcquiredAndEndsStopped() {
        Recording c = new Recording("a", new ArrayList<>(), true);
        assertThatThrownBy(() -> c.start().join()).hasRootCauseMessage("a cannot bind");
        assertThat(c.stops).isEqualTo(1);
        assertThat(c.state()).isEqualTo(LifecycleState.STOPPED);
    }

    @Test
    void aStackStopsInReverseAndUnwindsOnAFailedStart() {
        List<String> journal = new ArrayList<>();
        LifecycleStack stack = new LifecycleStack();
        stack.push(new Recording("config", journal, false));
        stack.push(new Recording("discovery", journal, false));
        assertThatThrownBy(() -> stack.push(new Recording("http", journal, true)))
                .isInstanceOf(CompletionException.class);
        assertThat(journal).containsExactly(
                "start config", "start discovery", "start http", "stop http", "stop discovery", "stop config");
        assertThat(stack.stopAll()).isDone();
        assertThatThrownBy(() -> stack.push(new Recording("late", journal, false)))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aNestedStackLogsAtDebugUnderItsOwnersNameSoTheLogShowsOneStack() {
        List<String> journal = new ArrayList<>();
        try (LogCapture stacks = LogCapture.of(LifecycleStack.class); LogCapture owner = LogCapture.of(Owner.class)) {
            LifecycleStack outer = new LifecycleStack();
            LifecycleStack inner = LifecycleStack.nested(Owner.class);
            outer.push(new Recording("encoder", journal, false));
            inner.push(new Recording("render pool", journal, false));
            inner.stopAll().join();
            outer.stopAll().join();

            assertThat(stacks.messages(Level.INFO)).containsExactly("started encoder", "stopped encoder");
            assertThat(stacks.all()).noneMatch(m -> m.contains("render pool"));
            assertThat(owner.messages(Level.DEBUG)).containsExactly("started part render pool", "stopped part render pool");
            assertThat(owner.messages(Level.INFO)).isEmpty();
        }
    }

    /** Stands for a component that keeps a stack of its own parts. */
    private static final class Owner {
    }

    @Test
    void anOwnedExecutorHasThreadsOnlyBetweenStartAndStop() throws Exception {
        OwnedExecutor pool = OwnedExecutor.fixed("lifecycle-test-pool", 2);
        assertThatThrownBy(pool::executor).isInstanceOf(IllegalStateException.class);
        pool.start().join();
        CompletableFuture<String> ran = CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(),
                pool.executor());
        assertThat(ran.join()).startsWith("lifecycle-test-pool-");
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> queued = CompletableFuture.runAsync(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, pool.executor());

        CompletableFuture<Void> stopped = pool.stop();
        assertThat(pool.stop()).isSameAs(stopped);
        assertThat(stopped).isNotDone(); // a running task is let finish
        release.countDown();
        stopped.join();
        assertThat(queued).isDone();
        await().until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.isAlive() && t.getName().startsWith("lifecycle-test-pool-")));
    }

    @Test
    void anOpenedResourceIsClosedOnStopAndAFailedOpenFailsTheStart() {
        AtomicInteger closes = new AtomicInteger();
        Lifecycle opened = Lifecycles.opening("subscription", () -> closes::incrementAndGet);
        opened.start().join();
        assertThat(closes).hasValue(0);
        opened.stop().join();
        opened.stop().join();
        assertThat(closes).hasValue(1);
        assertThat(opened).hasToString("subscription");

        Lifecycle failing = Lifecycles.opening("broken", () -> {
            throw new IllegalStateException("cannot open");
        });
        assertThatThrownBy(() -> failing.start().join()).hasRootCauseMessage("cannot open");
        assertThat(failing.state()).isEqualTo(LifecycleState.STOPPED);
    }

    @Test
    void aStackTellsItsListenerAndStopsEachComponentOffTheThreadThatStoppedThePrevious() {
        List<String> journal = new CopyOnWriteArrayList<>();
        List<String> stopThreads = new CopyOnWriteArrayList<>();
        LifecycleStack stack = new LifecycleStack(new LifecycleStack.Listener() {
            @Override
            public void started(Lifecycle component) {
                journal.add("started " + component);
            }

            @Override
            public void stopped(Lifecycle component) {
                journal.add("stopped " + component);
            }
        });
        for (String name : List.of("a", "b")) {
            stack.push(new StartStopSupport() {
                @Override
                protected CompletableFuture<Void> doStart() {
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                protected CompletableFuture<Void> doStop() {
                    stopThreads.add(Thread.currentThread().getName());
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                protected String lifecycleName() {
                    return name;
                }
            });
        }
        stack.stopAll().join();
        assertThat(journal).containsExactly("started a", "started b", "stopped b", "stopped a");
        assertThat(stopThreads).containsOnly("continuum-lifecycle-stop");
    }
}
