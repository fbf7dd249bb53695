package dev.continuum.router.proxy.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * The meters labelled with one configured backend name, all created up front (11 series) so the
 * hot path only increments, and all removed together when the backend leaves the configuration.
 */
public final class BackendMeters {
    private final MeterRegistry registry;
    private final Counter[] requests = new Counter[StatusClass.values().length];
    private final Counter[] retries = new Counter[RetryReason.values().length];
    private final Timer headLatency;
    private final List<Meter> all = new ArrayList<>();

    BackendMeters(MeterRegistry registry, String backend, DoubleSupplier healthy, DoubleSupplier circuitState) {
        this.registry = registry;
        for (StatusClass s : StatusClass.values()) {
            requests[s.ordinal()] = keep(Counter.builder(MetricNames.BACKEND_REQUESTS)
                    .description("Upstream attempts by backend and outcome")
                    .tag(MetricNames.TAG_BACKEND, backend).tag(MetricNames.TAG_STATUS_CLASS, s.label())
                    .register(registry));
        }
        for (RetryReason r : RetryReason.values()) {
            retries[r.ordinal()] = keep(Counter.builder(MetricNames.RETRIES)
                    .description("Retries on another backend, by the backend that failed and why")
                    .tag(MetricNames.TAG_BACKEND, backend).tag(MetricNames.TAG_REASON, r.label())
                    .register(registry));
        }
        headLatency = keep(Timer.builder(MetricNames.BACKEND_REQUEST_DURATION)
                .description("Time from an upstream attempt's start to its response head")
                .tag(MetricNames.TAG_BACKEND, backend)
                .serviceLevelObjectives(ProxyMetrics.LATENCY_BUCKETS)
                .register(registry));
        keep(Gauge.builder(MetricNames.BACKEND_HEALTHY, healthy::getAsDouble)
                .description("1 when the health check lets the backend be routed to (unknown or healthy)")
                .tag(MetricNames.TAG_BACKEND, backend).register(registry));
        keep(Gauge.builder(MetricNames.BACKEND_CIRCUIT_STATE, circuitState::getAsDouble)
                .description("Circuit breaker state: 0 closed, 1 half_open, 2 open")
                .tag(MetricNames.TAG_BACKEND, backend).register(registry));
    }

    private <M extends Meter> M keep(M meter) {
        all.add(meter);
        return meter;
    }

    public void request(StatusClass statusClass) {
        requests[statusClass.ordinal()].increment();
    }

    public void retry(RetryReason reason) {
        retries[reason.ordinal()].increment();
    }

    public void headLatency(long nanos) {
        headLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Removes every series of this backend from the registry (backend removed on reload). */
    public void remove() {
        for (Meter m : all) {
            registry.remove(m);
        }
    }
}
