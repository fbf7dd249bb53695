package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.BackendMeters;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a backend keeps across reloads while its name and URL stay the same: breaker state,
 * health state and probes, idle connections, meters.
 */
final class BackendResources {
    final String name;
    final URI url;
    final BackendEndpoint endpoint;
    final CircuitBreaker breaker;
    final HealthChecker health;
    final UpstreamPool pool;
    final BackendMeters meters;
    /** Attempts on this backend not yet ended ({@code LeastConnections}, the {@code ConsistentHash} load bound). */
    final AtomicInteger inFlight = new AtomicInteger();
    /** Moving average of response-head latency in nanoseconds, 0 before the first sample ({@code LeastLatency}). */
    final AtomicLong latencyEwmaNanos = new AtomicLong();

    BackendResources(String name, URI url, BackendEndpoint endpoint, CircuitBreaker breaker, HealthChecker health,
                     UpstreamPool pool, BackendMeters meters) {
        this.name = name;
        this.url = url;
        this.endpoint = endpoint;
        this.breaker = breaker;
        this.health = health;
        this.pool = pool;
        this.meters = meters;
    }

    /**
     * Folds one head latency into the average with weight 1/{@value #EWMA_DIVISOR}: recent answers
     * dominate within a few requests, one outlier does not. Lock-free; a lost race only drops one sample's share.
     */
    void recordLatency(long nanos) {
        long sample = Math.max(1, nanos);
        long old = latencyEwmaNanos.get();
        long next = old == 0 ? sample : old + (sample - old) / EWMA_DIVISOR;
        latencyEwmaNanos.compareAndSet(old, Math.max(1, next));
    }

    static final int EWMA_DIVISOR = 4;

    /** The backend left the configuration: stop probing, close idle connections, drop its series. */
    void close() {
        health.stop();
        pool.close();
        meters.remove();
    }
}
