package dev.continuum.router.core.proxy;

import dev.continuum.router.core.metrics.BackendMeters;
import java.net.URI;

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

    /** The backend left the configuration: stop probing, close idle connections, drop its series. */
    void close() {
        health.stop();
        pool.close();
        meters.remove();
    }
}
