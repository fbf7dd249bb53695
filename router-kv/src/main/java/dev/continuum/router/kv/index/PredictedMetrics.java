package dev.continuum.router.kv.index;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * The predicted cache's meters (closed labels): {@code continuum_dynamo_kv_predicted_blocks_total{result}} by
 * {@link PredictedBlocks.Outcome}, {@code continuum_dynamo_kv_predicted_entries} and
 * {@code continuum_dynamo_kv_predicted_contended_lookups_total}.
 */
final class PredictedMetrics implements PredictedBlocks.Counts {
    static final String BLOCKS = "continuum.dynamo.kv.predicted.blocks";
    static final String ENTRIES = "continuum.dynamo.kv.predicted.entries";
    static final String CONTENDED = "continuum.dynamo.kv.predicted.contended.lookups";

    private final MeterRegistry registry;
    private final Counter[] counters = new Counter[PredictedBlocks.Outcome.values().length];
    private final List<Meter> meters = new ArrayList<>();

    PredictedMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (PredictedBlocks.Outcome o : PredictedBlocks.Outcome.values()) {
            counters[o.ordinal()] = Counter.builder(BLOCKS)
                    .description("(rank, block) predictions of the router's own cache view, by outcome")
                    .tag("result", o.label()).register(registry);
            meters.add(counters[o.ordinal()]);
        }
    }

    /** Registers the overlay's gauges (once it exists). */
    void watch(PredictedBlocks predicted) {
        meters.add(Gauge.builder(ENTRIES, predicted, PredictedBlocks::entries)
                .description("(rank, block) predictions held by the predicted cache").register(registry));
        meters.add(registry.more().counter(CONTENDED, List.of(), predicted, PredictedBlocks::contendedReads));
    }

    @Override
    public void count(PredictedBlocks.Outcome outcome, long blocks) {
        if (blocks > 0) {
            counters[outcome.ordinal()].increment(blocks);
        }
    }

    double total(PredictedBlocks.Outcome outcome) {
        return counters[outcome.ordinal()].count();
    }

    void close() {
        meters.forEach(registry::remove);
    }
}
