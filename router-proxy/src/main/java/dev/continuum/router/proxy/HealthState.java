package dev.continuum.router.proxy;

/**
 * A backend's active health-check state. {@link #UNKNOWN} is the state before the first probe
 * answers and counts as routable, so a freshly started (or reloaded) router serves at once
 * instead of refusing traffic for a whole probe interval.
 */
public enum HealthState {
    /** No probe has decided yet (or checks are disabled): routable. */
    UNKNOWN(true),
    /** The last probes succeeded: routable. */
    HEALTHY(true),
    /** The backend answers 503 while it loads: not routable until it answers 200. */
    WARMING_UP(false),
    /** {@code unhealthy_threshold} consecutive failures, or warm-up longer than allowed: not routable. */
    DOWN(false);

    private final boolean routable;

    HealthState(boolean routable) {
        this.routable = routable;
    }

    public boolean routable() {
        return routable;
    }
}
