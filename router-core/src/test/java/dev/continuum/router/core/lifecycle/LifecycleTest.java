package dev.continuum.router.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
}
