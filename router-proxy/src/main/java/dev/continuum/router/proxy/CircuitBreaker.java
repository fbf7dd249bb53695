package dev.continuum.router.proxy;

import dev.continuum.router.core.config.CircuitBreakerConfig;
import java.util.function.LongSupplier;

/**
 * A per-backend three-state circuit breaker, exactly as {@link CircuitBreakerConfig} describes.
 * Every call is lock-free. A caller takes a permit with {@link #tryAcquire()} and reports the
 * outcome of that permit exactly once: {@link #onSuccess}, {@link #onFailure} (connect failure,
 * timeout, 5xx) or {@link #onIgnored} (the attempt ended without a verdict, for example the client
 * left). Permits are plain longs so the hot path allocates no permit object.
 */
public interface CircuitBreaker {
    /** What {@link #tryAcquire()} returns when the call is not permitted. */
    long NO_PERMIT = -1L;

    static CircuitBreaker create(CircuitBreakerConfig config, LongSupplier nanoClock) {
        return new NonBlockingCircuitBreaker(config, nanoClock);
    }

    /** A permit ({@code >= 0}) or {@link #NO_PERMIT}. May move open to half-open when the timeout elapsed. */
    long tryAcquire();

    /** Whether {@link #tryAcquire()} would succeed now, without taking anything. */
    boolean wouldPermit();

    void onSuccess(long permit);

    void onFailure(long permit);

    void onIgnored(long permit);

    CircuitState state();

    /** New thresholds apply from now on; the current state is kept (a disabled breaker closes). */
    void reconfigure(CircuitBreakerConfig config);
}
