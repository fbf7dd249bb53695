package dev.continuum.router.discovery;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;

/**
 * The router's view of the Dynamo fleet. Readers call {@link #snapshot()} (lock-free, one consistent
 * {@link DynamoSnapshot}) on every routing decision. Consumers that keep derived state (load and KV
 * subscriptions) follow the {@link #generation()} instead of holding snapshots: the generation is bumped
 * after a new snapshot is swapped in, and only when the fleet view changed, so an idempotent resync wakes
 * nobody and a slow subscriber never pins an old snapshot in memory.
 */
public interface DynamoRegistry {
    DynamoSnapshot snapshot();

    /** Whether discovery runs in the live configuration; check this instead of re-reading configuration. */
    default boolean isEnabled() {
        return snapshot().enabled();
    }

    /** The monotonic change generation; a snapshot read after observing generation g is at least as new. */
    long generation();

    /**
     * Waits until the generation exceeds {@code after} or {@code timeout} passes, and returns the generation
     * then current (equal to {@code after} on timeout).
     */
    long awaitGeneration(long after, Duration timeout) throws InterruptedException;

    /**
     * Calls {@code listener} with the new generation on {@code executor} after changes. Notifications are
     * coalesced: a listener that is still queued when more changes arrive runs once with the latest value.
     */
    Subscription subscribe(Executor executor, LongConsumer listener);

    /** Stops notifications; idempotent. */
    interface Subscription extends AutoCloseable {
        @Override
        void close();
    }
}
