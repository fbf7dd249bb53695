package dev.continuum.router.discovery.metrics;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Discovery's metric families. Label values come from enums ({@code kind}, {@code role}) and from the
 * configured namespaces (at most 16); series of a namespace that is no longer configured are removed.
 *
 * <ul>
 *   <li>{@code continuum_dynamo_discovery_events_total{kind}}: see {@link DiscoveryEventKind}</li>
 *   <li>{@code continuum_dynamo_discovery_connected}: 1 while every watch of the current pass is open</li>
 *   <li>{@code continuum_dynamo_discovery_workers{namespace,role}}: materialized workers</li>
 *   <li>{@code continuum_dynamo_registry_generation}: the registry's change generation</li>
 * </ul>
 */
public final class DiscoveryMetrics implements DiscoveryCounters, AutoCloseable {
    public static final String EVENTS = "continuum_dynamo_discovery_events";
    public static final String CONNECTED = "continuum_dynamo_discovery_connected";
    public static final String WORKERS = "continuum_dynamo_discovery_workers";
    public static final String GENERATION = "continuum_dynamo_registry_generation";

    private final MeterRegistry meters;
    private final DynamoRegistry registry;
    private final EnumMap<DiscoveryEventKind, Counter> events = new EnumMap<>(DiscoveryEventKind.class);
    private final Gauge connected;
    private final Gauge generation;
    /** Guarded by {@code this}: worker gauges by namespace, one counter per role. */
    private final Map<String, EnumMap<WorkerRole, AtomicLong>> workerCounts = new HashMap<>();
    private final Map<String, List<Meter>> workerGauges = new HashMap<>();
    private final DynamoRegistry.Subscription subscription;

    private DiscoveryMetrics(MeterRegistry meters, DynamoRegistry registry) {
        this.meters = meters;
        this.registry = registry;
        for (DiscoveryEventKind kind : DiscoveryEventKind.values()) {
            events.put(kind, Counter.builder(EVENTS).description("Discovery records, passes and watcher restarts")
                    .tag("kind", kind.label()).register(meters));
        }
        this.connected = Gauge.builder(CONNECTED, registry, r -> r.snapshot().connected() ? 1 : 0)
                .description("1 while every discovery watch is open").register(meters);
        this.generation = Gauge.builder(GENERATION, registry, DynamoRegistry::generation)
                .description("The registry's change generation").register(meters);
        // Counting on the writer's thread, right after each publish: O(workers) per change, never per scrape.
        this.subscription = registry.subscribe(Runnable::run, g -> refreshWorkers());
        refreshWorkers();
    }

    /** Registers the families on {@code meters} and follows {@code registry}. */
    public static DiscoveryMetrics bind(MeterRegistry meters, DynamoRegistry registry) {
        return new DiscoveryMetrics(meters, registry);
    }

    @Override
    public void increment(DiscoveryEventKind kind) {
        Objects.requireNonNull(events.get(kind)).increment(); // the constructor registers every kind
    }

    private synchronized void refreshWorkers() {
        DynamoSnapshot snapshot = registry.snapshot();
        List<String> namespaces = snapshot.enabled() ? snapshot.namespaces() : List.of();
        for (String gone : List.copyOf(workerGauges.keySet())) {
            if (!namespaces.contains(gone)) {
                Objects.requireNonNull(workerGauges.remove(gone)).forEach(meters::remove); // a key of the copy above
                workerCounts.remove(gone);
            }
        }
        Map<String, EnumMap<WorkerRole, Long>> counted = new HashMap<>();
        for (DynamoWorker worker : snapshot.workers()) {
            counted.computeIfAbsent(worker.namespace(), n -> new EnumMap<>(WorkerRole.class))
                    .merge(worker.role(), 1L, Long::sum);
        }
        for (String namespace : namespaces) {
            EnumMap<WorkerRole, AtomicLong> counts = workerCounts.computeIfAbsent(namespace, this::registerNamespace);
            EnumMap<WorkerRole, Long> now = counted.getOrDefault(namespace, new EnumMap<>(WorkerRole.class));
            counts.forEach((role, value) -> value.set(now.getOrDefault(role, 0L)));
        }
    }

    private EnumMap<WorkerRole, AtomicLong> registerNamespace(String namespace) {
        EnumMap<WorkerRole, AtomicLong> counts = new EnumMap<>(WorkerRole.class);
        List<Meter> gauges = new java.util.ArrayList<>();
        for (WorkerRole role : WorkerRole.values()) {
            AtomicLong value = new AtomicLong();
            counts.put(role, value);
            gauges.add(Gauge.builder(WORKERS, value, AtomicLong::get).description("Discovered Dynamo workers")
                    .tag("namespace", namespace).tag("role", role.wireName()).register(meters));
        }
        workerGauges.put(namespace, gauges);
        return counts;
    }

    /** Stops following the registry and removes every series. */
    @Override
    public synchronized void close() {
        subscription.close();
        events.values().forEach(meters::remove);
        meters.remove(connected);
        meters.remove(generation);
        workerGauges.values().forEach(list -> list.forEach(meters::remove));
        workerGauges.clear();
        workerCounts.clear();
    }
}
