package dev.continuum.router.proxy;

import dev.continuum.router.core.config.CircuitBreakerConfig;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * {@link CircuitBreaker} as compare-and-set over one immutable {@link State}. Closed-state
 * counters live in a tumbling window of {@code window}: both rules (consecutive failures and
 * failure rate after {@code minimum_requests}) are evaluated over the current window only.
 *
 * <p>Permits: {@code 0} is a closed-state permit; a half-open permit is the half-open epoch
 * ({@code >= 1}), so a late answer from an earlier half-open round (or a closed-state request that
 * finishes after the breaker opened) cannot miscount the current round.
 */
final class NonBlockingCircuitBreaker implements CircuitBreaker {
    private static final long CLOSED_PERMIT = 0L;

    /**
     * @param epoch  bumped on every transition; the permit of a half-open round
     * @param since  window start (closed), opening time (open), or half-open start
     */
    record State(CircuitState phase, long epoch, long since, int consecutiveFailures, int windowRequests,
                 int windowFailures, int halfOpenInFlight, int halfOpenSuccesses) {
    }

    private final LongSupplier nanoClock;
    private final AtomicReference<State> state;
    private volatile CircuitBreakerConfig config;

    NonBlockingCircuitBreaker(CircuitBreakerConfig config, LongSupplier nanoClock) {
        this.config = config;
        this.nanoClock = nanoClock;
        this.state = new AtomicReference<>(closed(1, nanoClock.getAsLong()));
    }

    private State current() {
        return Objects.requireNonNull(state.get()); // set in the constructor, only ever replaced by a state
    }

    private static State closed(long epoch, long now) {
        return new State(CircuitState.CLOSED, epoch, now, 0, 0, 0, 0, 0);
    }

    @Override
    public long tryAcquire() {
        CircuitBreakerConfig c = config;
        if (!c.enabled()) {
            return CLOSED_PERMIT;
        }
        for (;;) {
            State s = current();
            switch (s.phase) {
                case CLOSED:
                    return CLOSED_PERMIT;
                case OPEN: {
                    long now = nanoClock.getAsLong();
                    if (now - s.since < c.timeout().toNanos()) {
                        return NO_PERMIT;
                    }
                    State next = new State(CircuitState.HALF_OPEN, s.epoch + 1, now, 0, 0, 0, 1, 0);
                    if (state.compareAndSet(s, next)) {
                        return next.epoch;
                    }
                    break;
                }
                default: {
                    if (s.halfOpenInFlight >= c.halfOpenMaxRequests()) {
                        return NO_PERMIT;
                    }
                    State next = new State(CircuitState.HALF_OPEN, s.epoch, s.since, 0, 0, 0,
                            s.halfOpenInFlight + 1, s.halfOpenSuccesses);
                    if (state.compareAndSet(s, next)) {
                        return s.epoch;
                    }
                    break;
                }
            }
        }
    }

    @Override
    public boolean wouldPermit() {
        CircuitBreakerConfig c = config;
        if (!c.enabled()) {
            return true;
        }
        State s = current();
        return switch (s.phase) {
            case CLOSED -> true;
            case OPEN -> nanoClock.getAsLong() - s.since >= c.timeout().toNanos();
            case HALF_OPEN -> s.halfOpenInFlight < c.halfOpenMaxRequests();
        };
    }

    @Override
    public void onSuccess(long permit) {
        record(permit, Outcome.SUCCESS);
    }

    @Override
    public void onFailure(long permit) {
        record(permit, Outcome.FAILURE);
    }

    @Override
    public void onIgnored(long permit) {
        record(permit, Outcome.IGNORED);
    }

    private enum Outcome {
        SUCCESS,
        FAILURE,
        /** The request ended without a verdict (client left): only frees a half-open slot. */
        IGNORED
    }

    /** One CAS loop for every answer; {@link #next} returns null when the answer changes nothing. */
    private void record(long permit, Outcome outcome) {
        CircuitBreakerConfig c = config;
        if (permit < 0 || !c.enabled()) {
            return;
        }
        for (;;) {
            State s = current();
            State next = next(s, permit, outcome, nanoClock.getAsLong(), c);
            if (next == null || state.compareAndSet(s, next)) {
                return;
            }
        }
    }

    private static @Nullable State next(State s, long permit, Outcome outcome, long now, CircuitBreakerConfig c) {
        if (permit == CLOSED_PERMIT) {
            // A closed-state answer counts only while still closed; closed permits hold no half-open slot.
            if (s.phase != CircuitState.CLOSED || outcome == Outcome.IGNORED) {
                return null;
            }
            State w = roll(s, now, c);
            if (outcome == Outcome.SUCCESS) {
                return new State(CircuitState.CLOSED, w.epoch, w.since, 0, w.windowRequests + 1, w.windowFailures,
                        0, 0);
            }
            int requests = w.windowRequests + 1;
            int failures = w.windowFailures + 1;
            int consecutive = w.consecutiveFailures + 1;
            boolean trip = consecutive >= c.failureThreshold()
                    || (requests >= c.minimumRequests() && failures >= c.failureRateThreshold() * requests);
            return trip
                    ? open(s.epoch + 1, now)
                    : new State(CircuitState.CLOSED, w.epoch, w.since, consecutive, requests, failures, 0, 0);
        }
        if (s.phase != CircuitState.HALF_OPEN || s.epoch != permit) {
            return null; // an answer from an earlier half-open round
        }
        int inFlight = Math.max(0, s.halfOpenInFlight - 1);
        return switch (outcome) {
            case FAILURE -> open(s.epoch + 1, now);
            case IGNORED -> new State(CircuitState.HALF_OPEN, s.epoch, s.since, 0, 0, 0, inFlight,
                    s.halfOpenSuccesses);
            case SUCCESS -> s.halfOpenSuccesses + 1 >= c.halfOpenSuccessThreshold()
                    ? closed(s.epoch + 1, now)
                    : new State(CircuitState.HALF_OPEN, s.epoch, s.since, 0, 0, 0, inFlight, s.halfOpenSuccesses + 1);
        };
    }

    @Override
    public CircuitState state() {
        return config.enabled() ? current().phase : CircuitState.CLOSED;
    }

    @Override
    public void reconfigure(CircuitBreakerConfig newConfig) {
        this.config = newConfig;
        if (!newConfig.enabled()) {
            state.set(closed(current().epoch + 1, nanoClock.getAsLong()));
        }
    }

    private static State open(long epoch, long now) {
        return new State(CircuitState.OPEN, epoch, now, 0, 0, 0, 0, 0);
    }

    /** Starts a new tumbling window when the current one is over. */
    private static State roll(State s, long now, CircuitBreakerConfig c) {
        if (now - s.since >= c.window().toNanos()) {
            return new State(CircuitState.CLOSED, s.epoch, now, 0, 0, 0, 0, 0);
        }
        return s;
    }
}
