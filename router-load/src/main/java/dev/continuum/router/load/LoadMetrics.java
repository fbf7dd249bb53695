package dev.continuum.router.load;

import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.Transport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.ToIntBiFunction;
import org.jspecify.annotations.Nullable;

/**
 * The load-signal meters. Labels are closed: {@code result} and {@code state}/{@code transport} come from
 * enums; the per-worker gauges carry only {@code namespace} (one of at most 16 configured), {@code worker}
 * (lowercase hex) and {@code dp_rank} (decimal), exist only while the held sample has the field (nil exports
 * no series), and are removed when the sample goes (the worker departed, or its publisher's samples were
 * dropped after a gap or reconnect).
 */
final class LoadMetrics implements ConcurrentLoadStore.Listener {
    /** {@code continuum_dynamo_load_events_total{result}}. */
    static final String EVENTS = "continuum.dynamo.load.events";
    /** {@code continuum_dynamo_load_subscriptions{state,transport}}. */
    static final String SUBSCRIPTIONS = "continuum.dynamo.load.subscriptions";
    /** {@code continuum_dynamo_load_active_decode_blocks{namespace,worker,dp_rank}}. */
    static final String ACTIVE_DECODE_BLOCKS = "continuum.dynamo.load.active.decode.blocks";
    /** {@code continuum_dynamo_load_active_prefill_tokens{namespace,worker,dp_rank}}. */
    static final String ACTIVE_PREFILL_TOKENS = "continuum.dynamo.load.active.prefill.tokens";
    /** {@code continuum_dynamo_load_kv_used_blocks{namespace,worker,dp_rank}}. */
    static final String KV_USED_BLOCKS = "continuum.dynamo.load.kv.used.blocks";

    private static final List<Field> FIELDS = List.of(
            new Field(ACTIVE_DECODE_BLOCKS, "Active decode blocks in the worker rank's latest ActiveLoad sample",
                    s -> s.load().activeDecodeBlocks()),
            new Field(ACTIVE_PREFILL_TOKENS, "Active prefill tokens in the worker rank's latest ActiveLoad sample",
                    s -> s.load().activePrefillTokens()),
            new Field(KV_USED_BLOCKS, "KV blocks in use in the worker rank's latest ActiveLoad sample",
                    s -> s.load().kvUsedBlocks()));

    private record Field(String name, String description, Function<LoadSample, @Nullable Long> value) {
    }

    private final MeterRegistry registry;
    private final LoadStore store;
    private final Counter[] events = new Counter[LoadEventResult.values().length];
    private final List<Meter> fixed = new ArrayList<>();
    /** Per key, one slot per {@link #FIELDS} entry; a null slot exports no series. */
    private final ConcurrentHashMap<SampleKey, Meter[]> workerGauges = new ConcurrentHashMap<>();

    LoadMetrics(MeterRegistry registry, LoadStore store, ToIntBiFunction<SubscriptionState, Transport> subscriptions) {
        this.registry = registry;
        this.store = store;
        for (LoadEventResult r : LoadEventResult.values()) {
            events[r.ordinal()] = Counter.builder(EVENTS)
                    .description("kv_metrics messages by outcome, and transport refusals")
                    .tag("result", r.label()).register(registry);
            fixed.add(events[r.ordinal()]);
        }
        for (SubscriptionState s : SubscriptionState.values()) {
            for (Transport t : Transport.values()) {
                fixed.add(Gauge.builder(SUBSCRIPTIONS, () -> subscriptions.applyAsInt(s, t))
                        .description("kv_metrics subscriptions by state and transport")
                        .tag("state", s.label()).tag("transport", t.label()).register(registry));
            }
        }
    }

    void count(LoadEventResult result) {
        events[result.ordinal()].increment();
    }

    /** The counter's total so far (tests). */
    double total(LoadEventResult result) {
        return events[result.ordinal()].count();
    }

    @Override
    public void updated(LoadSample sample) {
        SampleKey key = sample.key();
        Meter[] current = workerGauges.get(key);
        if (current != null && matches(current, sample)) {
            return; // the common case: the same fields as last time, nothing to register
        }
        workerGauges.compute(key, (k, meters) -> {
            Meter[] next = meters == null ? new Meter[FIELDS.size()] : meters;
            for (int i = 0; i < FIELDS.size(); i++) {
                Field f = FIELDS.get(i);
                boolean present = f.value().apply(sample) != null;
                if (present && next[i] == null) {
                    next[i] = Gauge.builder(f.name(), () -> valueOf(k, f))
                            .description(f.description())
                            .tag("namespace", k.worker().namespace())
                            .tag("worker", k.worker().hex())
                            .tag("dp_rank", Long.toString(k.dpRank()))
                            .register(registry);
                } else if (!present && next[i] != null) {
                    registry.remove(next[i]);
                    next[i] = null;
                }
            }
            return next;
        });
        // A removal that raced this registration: take the series back.
        if (store.latest(key.worker(), key.dpRank()) == null) {
            removed(key);
        }
    }

    private static boolean matches(Meter[] meters, LoadSample sample) {
        for (int i = 0; i < FIELDS.size(); i++) {
            if ((meters[i] != null) != (FIELDS.get(i).value().apply(sample) != null)) {
                return false;
            }
        }
        return true;
    }

    private double valueOf(SampleKey key, Field f) {
        LoadSample s = store.latest(key.worker(), key.dpRank());
        Long v = s == null ? null : f.value().apply(s);
        if (v == null) {
            return Double.NaN;
        }
        // Unsigned: values above Long.MAX_VALUE are exported as their unsigned magnitude.
        return v >= 0 ? v : unsignedToDouble(v);
    }

    private static double unsignedToDouble(long v) {
        return (double) (v >>> 1) * 2.0 + (v & 1);
    }

    @Override
    public void removed(SampleKey key) {
        Meter[] meters = workerGauges.remove(key);
        if (meters != null) {
            for (Meter m : meters) {
                if (m != null) {
                    registry.remove(m);
                }
            }
        }
    }

    /** Per-worker series currently exported (tests and the admin view). */
    int workerSeries() {
        int n = 0;
        for (Meter[] meters : workerGauges.values()) {
            for (Meter m : meters) {
                n += m == null ? 0 : 1;
            }
        }
        return n;
    }

    /** Removes every meter of this instance (supervisor stop). */
    void close() {
        for (SampleKey key : List.copyOf(workerGauges.keySet())) {
            removed(key);
        }
        fixed.forEach(registry::remove);
    }
}
