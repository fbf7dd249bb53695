package dev.continuum.router.eventbus;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The listener's meters. Labels are closed: {@code code} comes from {@link BusErrorCode}; no session, stream,
 * broker or client string is ever a label.
 */
public final class BusMetrics {
    /** {@code continuum_dynamo_event_bus_sessions}: welcomed sessions. */
    public static final String SESSIONS = "continuum.dynamo.event.bus.sessions";
    /** {@code continuum_dynamo_event_bus_connections}: open TCP connections. */
    public static final String CONNECTIONS = "continuum.dynamo.event.bus.connections";
    /** {@code continuum_dynamo_event_bus_refusals_total{code}}: refused connections and requests, ended sessions. */
    public static final String REFUSALS = "continuum.dynamo.event.bus.refusals";

    private final MeterRegistry registry;
    private final Counter[] refusals = new Counter[BusErrorCode.values().length];
    private final List<Meter> meters = new ArrayList<>();
    public final AtomicInteger connections = new AtomicInteger();

    public BusMetrics(MeterRegistry registry, BusSessions sessions) {
        this.registry = registry;
        for (BusErrorCode code : BusErrorCode.values()) {
            refusals[code.ordinal()] = Counter.builder(REFUSALS)
                    .description("Event-bus connections and requests refused, and sessions ended, by code")
                    .tag("code", code.code()).register(registry);
            meters.add(refusals[code.ordinal()]);
        }
        meters.add(Gauge.builder(SESSIONS, sessions, BusSessions::sessionCount)
                .description("Welcomed event-bus sessions").register(registry));
        meters.add(Gauge.builder(CONNECTIONS, connections, AtomicInteger::get)
                .description("Open event-bus TCP connections").register(registry));
    }

    public void refused(BusErrorCode code) {
        refusals[code.ordinal()].increment();
    }

    public double refusals(BusErrorCode code) {
        return refusals[code.ordinal()].count();
    }

    public void close() {
        meters.forEach(registry::remove);
    }
}
