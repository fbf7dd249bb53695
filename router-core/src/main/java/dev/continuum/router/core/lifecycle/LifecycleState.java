package dev.continuum.router.core.lifecycle;

/** Where a {@link Lifecycle} stands; it only ever moves forward through these, in this order. */
public enum LifecycleState {
    /** Built, never started. */
    NEW,
    STARTING,
    STARTED,
    STOPPING,
    /** Final: stopped after a start, stopped before any start, or failed to start and cleaned up. */
    STOPPED
}
