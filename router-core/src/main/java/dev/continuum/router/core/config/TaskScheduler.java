package dev.continuum.router.core.config;

import java.time.Duration;

/**
 * Runs tasks after a delay, one at a time, so the tasks need no locks between them. Injected into
 * the reload debouncer so that its tests drive time instead of waiting for it.
 */
interface TaskScheduler {
    /** Cancels a scheduled task that has not started yet; does nothing otherwise. */
    interface Cancellable {
        void cancel();
    }

    /** Runs {@code task} once, {@code delay} from now (zero: as soon as possible). */
    Cancellable schedule(Runnable task, Duration delay);
}
