package dev.continuum.router.core.config;

import java.time.Duration;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A {@link TaskScheduler} on virtual time: tasks run only inside {@link #advance} and
 * {@link #runDue}, on the calling thread, in order of due time (then of scheduling). Thread-safe, so
 * a real file watcher may schedule from its own thread while the test drives time.
 */
final class ManualScheduler implements TaskScheduler {
    private record Entry(long due, long seq, Runnable task, boolean[] cancelled) {
    }

    private final PriorityQueue<Entry> queue = new PriorityQueue<>(
            Comparator.comparingLong(Entry::due).thenComparingLong(Entry::seq));
    private long now;
    private long seq;

    @Override
    public synchronized Cancellable schedule(Runnable task, Duration delay) {
        boolean[] cancelled = {false};
        queue.add(new Entry(now + delay.toNanos(), seq++, task, cancelled));
        return () -> {
            synchronized (this) {
                cancelled[0] = true;
            }
        };
    }

    /** Whether a task is due now (for example the watcher's event, scheduled with no delay). */
    synchronized boolean hasDue() {
        return queue.stream().anyMatch(e -> !e.cancelled()[0] && e.due() <= now);
    }

    /** Runs every task due by now, including those they schedule for now. */
    synchronized void runDue() {
        advance(Duration.ZERO);
    }

    /** Moves virtual time forward, running each task when its time comes. */
    synchronized void advance(Duration by) {
        long until = now + by.toNanos();
        while (!queue.isEmpty() && queue.peek().due() <= until) {
            Entry e = queue.poll();
            now = Math.max(now, e.due());
            if (!e.cancelled()[0]) {
                e.task().run();
            }
        }
        now = until;
    }
}
