package dev.continuum.router.core.lifecycle;

import java.util.concurrent.CompletableFuture;

/**
 * The contract of every long-lived component (servers, watchers, supervisors, schedulers): start
 * once, stop once, observe where it stands.
 *
 * <ul>
 *   <li>{@link #start()} moves {@code NEW -> STARTING -> STARTED}; its future completes when the
 *       component is serving, or exceptionally when it could not start (the component has then
 *       released what it acquired and is {@code STOPPED}). Starting twice returns the first
 *       start's future; starting after a stop fails.
 *   <li>{@link #stop()} is idempotent: every call returns the same future, which completes when
 *       everything the component owns (threads, sockets, timers) is released. Stopping a
 *       component that never started completes at once. A stop never completes exceptionally:
 *       a failure while releasing is logged by the component, because nothing can act on it.
 * </ul>
 *
 * {@link StartStopSupport} implements the state machine; components supply only the two actions.
 */
public interface Lifecycle {

    CompletableFuture<Void> start();

    CompletableFuture<Void> stop();

    LifecycleState state();
}
