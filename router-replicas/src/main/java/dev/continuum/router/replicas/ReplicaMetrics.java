package dev.continuum.router.replicas;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Replica sync's meters, with closed labels only (no replica ID: peers come and go): peers by state, the sync lag,
 * messages and bytes published by kind, messages dropped by reason, resynchronisations by reason, departures by
 * reason and batches not published while NATS was away.
 */
final class ReplicaMetrics {
    enum Resync { JOIN, GAP, RESTART, RECONNECT, RETRY }

    enum Departure { TIMEOUT, RESTART, LEFT }

    private final Counter[] dropped = new Counter[SyncDrop.values().length];
    private final Counter[] published = new Counter[SyncMessage.Kind.values().length];
    private final Counter[] publishedBytes = new Counter[SyncMessage.Kind.values().length];
    private final Counter[] resyncs = new Counter[Resync.values().length];
    private final Counter[] departures = new Counter[Departure.values().length];
    private final Counter unpublished;

    /** @param sync whose gauges to register, or null (a {@link SyncPipe}: counters only) */
    ReplicaMetrics(MeterRegistry registry, @Nullable ReplicaSync sync) {
        if (sync != null) {
            gauge(registry, "synced", sync, s -> s.peerCount(true));
            gauge(registry, "resyncing", sync, s -> s.peerCount(false));
            Gauge.builder("continuum_replicas_sync_lag_seconds", sync, ReplicaSync::syncLagSeconds)
                    .description("Longest time since a followed peer was last heard from").register(registry);
        }
        for (SyncDrop d : SyncDrop.values()) {
            dropped[d.ordinal()] = Counter.builder("continuum_replicas_dropped_messages_total")
                    .description("Replica-sync messages dropped, never applied, by reason").tag("reason", d.label())
                    .register(registry);
        }
        for (SyncMessage.Kind k : SyncMessage.Kind.values()) {
            String kind = k.name().toLowerCase(java.util.Locale.ROOT);
            published[k.ordinal()] = Counter.builder("continuum_replicas_published_messages_total")
                    .description("Replica-sync messages published, by kind").tag("kind", kind).register(registry);
            publishedBytes[k.ordinal()] = Counter.builder("continuum_replicas_published_bytes_total")
                    .description("Replica-sync payload bytes published, by kind").tag("kind", kind)
                    .register(registry);
        }
        for (Resync r : Resync.values()) {
            resyncs[r.ordinal()] = Counter.builder("continuum_replicas_resyncs_total")
                    .description("Snapshots asked of a peer, by reason").tag("reason", label(r))
                    .register(registry);
        }
        for (Departure d : Departure.values()) {
            departures[d.ordinal()] = Counter.builder("continuum_replicas_peer_departures_total")
                    .description("Peer partitions dropped, by reason").tag("reason", label(d)).register(registry);
        }
        unpublished = Counter.builder("continuum_replicas_unpublished_batches_total")
                .description("Own batches not published because NATS was unreachable (peers resynchronise)")
                .register(registry);
    }

    private static void gauge(MeterRegistry registry, String state, ReplicaSync sync,
            ToDoubleFunction<ReplicaSync> f) {
        Gauge.builder("continuum_replicas_peers", sync, f).description("Peer replicas followed, by state")
                .tag("state", state).register(registry);
    }

    private static String label(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }

    void sessions(MeterRegistry registry, SessionBindings sessions) {
        Gauge.builder("continuum_replicas_session_bindings", sessions, SessionBindings::size)
                .description("Sessions bound to a decode rank (own and peers')").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("continuum_replicas_sessions_unbound_total", sessions,
                        SessionBindings::unbound)
                .description("Sessions not bound because the table was full").register(registry);
    }

    void dropped(SyncDrop reason) {
        dropped[reason.ordinal()].increment();
    }

    double droppedCount(SyncDrop reason) {
        return dropped[reason.ordinal()].count();
    }

    void published(SyncMessage.Kind kind, int bytes) {
        published[kind.ordinal()].increment();
        publishedBytes[kind.ordinal()].increment(bytes);
    }

    void resync(Resync reason) {
        resyncs[reason.ordinal()].increment();
    }

    double resyncCount(Resync reason) {
        return resyncs[reason.ordinal()].count();
    }

    void departed(Departure reason) {
        departures[reason.ordinal()].increment();
    }

    double departureCount(Departure reason) {
        return departures[reason.ordinal()].count();
    }

    void unpublished() {
        unpublished.increment();
    }
}
