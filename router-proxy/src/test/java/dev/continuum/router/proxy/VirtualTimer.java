package dev.continuum.router.proxy;

import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * A {@link ProxyTimer} on virtual time, for tests of the proxy's timeouts and backoff: nothing fires until the test
 * {@link #advance advances} the time, and then every task due runs on its own event loop, in due order. A cancelled
 * task never runs. Thread-safe: the proxy schedules from its event loops, the test advances from its own thread.
 */
public final class VirtualTimer implements ProxyTimer {
    private record Task(long due, EventLoop loop, Runnable task, CompletableFuture<Void> handle) {
    }

    private final List<Task> tasks = new ArrayList<>();
    private long now;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized Future<?> schedule(EventLoop loop, Runnable task, long delayNanos) {
        CompletableFuture<Void> handle = new CompletableFuture<>();
        tasks.add(new Task(now + Math.max(0, delayNanos), loop, task, handle));
        return handle;
    }

    /** Moves the time on by {@code d} and hands every task now due to its event loop. */
    public void advance(Duration d) {
        List<Task> due = new ArrayList<>();
        synchronized (this) {
            now += d.toNanos();
            for (Task t : tasks) {
                if (t.due() <= now) {
                    due.add(t);
                }
            }
            tasks.removeAll(due);
        }
        due.sort(Comparator.comparingLong(Task::due));
        for (Task t : due) {
            t.loop().execute(() -> {
                if (t.handle().complete(null)) {
                    t.task().run();
                }
            });
        }
    }

    /** How long until the earliest task still scheduled (not cancelled) is due; empty when none is. */
    public synchronized Optional<Duration> nextDue() {
        tasks.removeIf(t -> t.handle().isDone());
        return tasks.stream().mapToLong(Task::due).min().stream().boxed().findFirst()
                .map(due -> Duration.ofNanos(due - now));
    }

    /** How many tasks are scheduled and not cancelled. */
    public synchronized int pending() {
        tasks.removeIf(t -> t.handle().isDone());
        return tasks.size();
    }
}
