package dev.continuum.router.proxy.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ingress's own families: refusals by reason, out-of-memory conditions, and gauges of the two
 * shared bounds (open connections, buffered request bytes). Every series exists from start at 0.
 */
final class IngressMetrics {
    static final String REJECTED = "continuum.ingress.rejected";
    static final String OUT_OF_MEMORY = "continuum.ingress.out.of.memory";
    static final String CONNECTIONS = "continuum.ingress.connections";
    static final String BUFFERED_BYTES = "continuum.ingress.buffered.request.bytes";

    private final Counter[] rejected = new Counter[Rejection.values().length];
    private final Counter outOfMemory;

    IngressMetrics(MeterRegistry registry, AtomicInteger connections, AtomicLong bufferedBytes) {
        for (Rejection r : Rejection.values()) {
            rejected[r.ordinal()] = Counter.builder(REJECTED)
                    .description("Requests the ingress refused before routing them, by reason")
                    .tag("reason", r.label).register(registry);
        }
        outOfMemory = Counter.builder(OUT_OF_MEMORY)
                .description("Allocation failures (direct or heap memory) while serving a client connection")
                .register(registry);
        Gauge.builder(CONNECTIONS, connections, AtomicInteger::get)
                .description("Open client connections counted against server.max_connections").register(registry);
        Gauge.builder(BUFFERED_BYTES, bufferedBytes, AtomicLong::get)
                .description("Request body bytes held by all connections, bounded by server.max_buffered_request_size")
                .baseUnit("bytes").register(registry);
    }

    void rejected(Rejection reason) {
        rejected[reason.ordinal()].increment();
    }

    void outOfMemory() {
        outOfMemory.increment();
    }
}
