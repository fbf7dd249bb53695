package dev.continuum.router.kv.index;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * The index's meters. Labels are closed: {@code result} comes from {@link KvEventResult}; the per-rank gauge
 * carries {@code namespace}, {@code worker} (lowercase hex) and {@code dp_rank} of admitted ranks only (live
 * workers, declared ranks, at most the ranks-per-subscription ceiling), and is removed with its rank.
 */
public final class KvIndexMetrics {
    /** {@code continuum_dynamo_kv_events_total{result}}. */
    public static final String EVENTS = "continuum.dynamo.kv.events";
    /** {@code continuum_dynamo_kv_index_nodes}. */
    public static final String NODES = "continuum.dynamo.kv.index.nodes";
    /** {@code continuum_dynamo_kv_index_ownerships}. */
    public static final String OWNERSHIPS = "continuum.dynamo.kv.index.ownerships";
    /** {@code continuum_dynamo_kv_index_contended_lookups_total}. */
    public static final String CONTENDED = "continuum.dynamo.kv.index.contended.lookups";
    /** {@code continuum_dynamo_kv_index_rank_blocks{namespace,worker,dp_rank}}. */
    public static final String RANK_BLOCKS = "continuum.dynamo.kv.index.rank.blocks";

    private final MeterRegistry registry;
    private final Counter[] events = new Counter[KvEventResult.values().length];
    private final List<Meter> fixed = new ArrayList<>();

    public KvIndexMetrics(MeterRegistry registry, RadixIndex index) {
        this.registry = registry;
        for (KvEventResult r : KvEventResult.values()) {
            events[r.ordinal()] = Counter.builder(EVENTS).description("kv-events by outcome")
                    .tag("result", r.label()).register(registry);
            fixed.add(events[r.ordinal()]);
        }
        fixed.add(Gauge.builder(NODES, index, RadixIndex::nodes)
                .description("Radix nodes (distinct token-block prefixes) in the KV index").register(registry));
        fixed.add(Gauge.builder(OWNERSHIPS, index, RadixIndex::ownerships)
                .description("(rank, block) ownerships in the KV index").register(registry));
        fixed.add(registry.more().counter(CONTENDED, List.of(), index, RadixIndex::contendedReads));
    }

    void count(KvEventResult result) {
        events[result.ordinal()].increment();
    }

    void count(KvEventResult result, int times) {
        if (times > 0) {
            events[result.ordinal()].increment(times);
        }
    }

    /** The counter's total so far (tests, admin). */
    public double total(KvEventResult result) {
        return events[result.ordinal()].count();
    }

    /** The block-count gauge of one admitted rank; the writer updates {@link RankGauge#blocks}. */
    RankGauge rankGauge(String namespace, long workerId, long dpRank) {
        RankGauge holder = new RankGauge();
        holder.meter = Gauge.builder(RANK_BLOCKS, holder, h -> h.blocks)
                .description("Engine blocks the KV index holds for a worker rank")
                .tag("namespace", namespace).tag("worker", Long.toHexString(workerId))
                .tag("dp_rank", Long.toString(dpRank)).register(registry);
        return holder;
    }

    void remove(RankGauge gauge) {
        if (gauge.meter != null) {
            registry.remove(gauge.meter);
        }
    }

    /** Removes every meter (on stop). */
    void close() {
        fixed.forEach(registry::remove);
    }

    /** One rank's gauge value, written by the index writer only. */
    static final class RankGauge {
        volatile int blocks;
        @org.jspecify.annotations.Nullable Meter meter;
    }
}
