package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.config.BackoffConfig;
import java.time.Duration;

/**
 * The delay before a new pass. It doubles on every failure, up to {@code max}, and goes back to
 * {@code initial} only after a pass whose watches all stayed open for at least {@code max}: an etcd proxy
 * that answers range gets but closes watch streams at once must not get a floor-rate reconnect loop.
 * Not thread-safe: owned by one watcher.
 */
final class Backoff {
    private final Duration initial;
    private final Duration max;
    private Duration next;

    Backoff(BackoffConfig config) {
        this.initial = config.initial();
        this.max = config.max();
        this.next = initial;
    }

    /**
     * @param watchesOpenFor how long the ended pass had every watch open (zero when it never got there)
     * @return how long to wait before the next pass
     */
    Duration afterPass(Duration watchesOpenFor) {
        if (watchesOpenFor.compareTo(max) >= 0) {
            next = initial;
        }
        Duration delay = next;
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(max) > 0 ? max : doubled;
        return delay;
    }
}
