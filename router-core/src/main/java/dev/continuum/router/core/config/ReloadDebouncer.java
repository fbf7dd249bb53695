package dev.continuum.router.core.config;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns file events into reloads of complete files. A writer that is still busy (a truncate followed
 * by a slow write, a file written in two pieces) produces events, or changes the bytes, within the
 * quiet interval; so a snapshot is applied only when
 * <ol>
 *   <li>no event arrived for one quiet interval, then the files are read (the candidate), and</li>
 *   <li>no event arrived for another quiet interval, and a second read gives the same snapshot.</li>
 * </ol>
 * A new event drops the candidate and starts over; a second read that differs becomes the new
 * candidate. All state lives on the scheduler's single thread; {@link #changed()} may be called from
 * any thread and coalesces a burst of calls into one task.
 *
 * @param <T> a snapshot of the watched files, compared with {@code equals}
 */
final class ReloadDebouncer<T> {
    private static final Logger log = LoggerFactory.getLogger(ReloadDebouncer.class);

    private final TaskScheduler scheduler;
    private final Duration quiet;
    private final Supplier<T> read;
    private final Consumer<T> apply;
    private final AtomicBoolean changeQueued = new AtomicBoolean();
    // Confined to the scheduler thread:
    private TaskScheduler.@Nullable Cancellable pending;
    private @Nullable T candidate;

    ReloadDebouncer(TaskScheduler scheduler, Duration quiet, Supplier<T> read, Consumer<T> apply) {
        this.scheduler = scheduler;
        this.quiet = quiet;
        this.read = read;
        this.apply = apply;
    }

    /** A watched file changed (or may have): restart the wait. Never blocks. */
    void changed() {
        if (changeQueued.compareAndSet(false, true)) {
            scheduler.schedule(this::restart, Duration.ZERO);
        }
    }

    private void restart() {
        changeQueued.set(false);
        candidate = null;
        reschedule();
    }

    private void reschedule() {
        if (pending != null) {
            pending.cancel();
        }
        pending = scheduler.schedule(this::settle, quiet);
    }

    private void settle() {
        pending = null;
        if (changeQueued.get()) {
            return; // an event is queued behind this task; it restarts the wait
        }
        T now = read.get();
        if (candidate == null || !candidate.equals(now)) {
            candidate = now;
            reschedule();
            return;
        }
        candidate = null;
        try {
            apply.accept(now);
        } catch (RuntimeException e) {
            log.error("config reload after a file change failed", e);
        }
    }
}
