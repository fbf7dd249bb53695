package dev.continuum.router.proxy.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.DoubleSupplier;

/**
 * The ingress and proxy meters. Every label comes from an enum of this package or from a
 * configured backend name, so the series count is bounded. Hot-path calls do not allocate after
 * warm-up: meters are created once per label combination and cached in arrays indexed by ordinal
 * (a lock-free read; a racing first creation is harmless because registration is idempotent).
 */
public final class ProxyMetrics {
    /** Buckets for both latency histograms: LLM requests range from milliseconds to minutes. */
    static final Duration[] LATENCY_BUCKETS = {
        Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
        Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
        Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(300)};

    private static final int MIN_STATUS = 100;
    private static final int STATUS_SLOTS = 500;
    private static final int METHODS = MethodLabel.values().length;
    private static final int ENDPOINTS = Endpoint.values().length;

    private final MeterRegistry registry;
    /** [method][endpoint][status-100]: at most 8*8*500 series; statuses outside 100..599 never reach here. */
    private final AtomicReferenceArray<Counter> httpRequests =
            new AtomicReferenceArray<>(METHODS * ENDPOINTS * STATUS_SLOTS);
    private final AtomicReferenceArray<Timer> httpDurations = new AtomicReferenceArray<>(METHODS * ENDPOINTS);
    private final Counter[] rateLimited = new Counter[RateLimitTier.values().length];
    private final Counter[] streamAborts = new Counter[StreamAbort.values().length];
    private final Counter[] fallbacks = new Counter[FallbackReason.values().length];

    public ProxyMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (RateLimitTier t : RateLimitTier.values()) {
            rateLimited[t.ordinal()] = Counter.builder(MetricNames.RATE_LIMITED)
                    .description("Requests refused by a rate limit, by the tier that refused them")
                    .tag(MetricNames.TAG_TIER, t.label()).register(registry);
        }
        for (StreamAbort a : StreamAbort.values()) {
            streamAborts[a.ordinal()] = Counter.builder(MetricNames.STREAM_ABORTS)
                    .description("Responses cut short after their head went to the client")
                    .tag(MetricNames.TAG_SIDE, a.side().label()).tag(MetricNames.TAG_REASON, a.label())
                    .register(registry);
        }
        for (FallbackReason r : FallbackReason.values()) {
            fallbacks[r.ordinal()] = Counter.builder(MetricNames.MODEL_FALLBACKS)
                    .description("Requests sent on to a fallback model, by the trigger condition that fired")
                    .tag(MetricNames.TAG_REASON, r.label()).register(registry);
        }
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** One finished client request (any route): {@code status} is what the client got. */
    public void recordHttp(HttpMethod method, Endpoint endpoint, int status, long durationNanos) {
        MethodLabel m = MethodLabel.of(method);
        int st = Math.min(Math.max(status, MIN_STATUS), MIN_STATUS + STATUS_SLOTS - 1);
        int idx = (m.ordinal() * ENDPOINTS + endpoint.ordinal()) * STATUS_SLOTS + (st - MIN_STATUS);
        Counter c = httpRequests.get(idx);
        if (c == null) {
            c = Counter.builder(MetricNames.HTTP_REQUESTS)
                    .description("HTTP requests by method, route template and status")
                    .tag(MetricNames.TAG_METHOD, m.name())
                    .tag(MetricNames.TAG_ENDPOINT, endpoint.label())
                    .tag(MetricNames.TAG_STATUS, Integer.toString(st))
                    .register(registry);
            httpRequests.set(idx, c);
        }
        c.increment();
        int tIdx = m.ordinal() * ENDPOINTS + endpoint.ordinal();
        Timer t = httpDurations.get(tIdx);
        if (t == null) {
            t = Timer.builder(MetricNames.HTTP_REQUEST_DURATION)
                    .description("Time from a request's arrival to the end of its response")
                    .tag(MetricNames.TAG_METHOD, m.name())
                    .tag(MetricNames.TAG_ENDPOINT, endpoint.label())
                    .serviceLevelObjectives(LATENCY_BUCKETS)
                    .register(registry);
            httpDurations.set(tIdx, t);
        }
        t.record(durationNanos, TimeUnit.NANOSECONDS);
    }

    public void rateLimited(RateLimitTier tier) {
        rateLimited[tier.ordinal()].increment();
    }

    public void fellBack(FallbackReason reason) {
        fallbacks[reason.ordinal()].increment();
    }

    public void streamAborted(StreamAbort reason) {
        streamAborts[reason.ordinal()].increment();
    }

    /**
     * Registers the meters of one configured backend. The caller removes them with
     * {@link BackendMeters#remove()} when the backend leaves the configuration.
     */
    public BackendMeters registerBackend(String backend, DoubleSupplier healthy, DoubleSupplier circuitState) {
        return new BackendMeters(registry, backend, healthy, circuitState);
    }
}
