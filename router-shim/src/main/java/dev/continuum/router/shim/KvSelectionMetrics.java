package dev.continuum.router.shim;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code continuum_dynamo_kv_selection_total{result}}: one count per selection the KV-aware picker made, by
 * {@link KvSelectionResult}. Every label is registered up front, so a dashboard sees zeros before traffic.
 */
final class KvSelectionMetrics {
    static final String NAME = "continuum.dynamo.kv.selection";

    private final Counter[] counters = new Counter[KvSelectionResult.values().length];

    KvSelectionMetrics(MeterRegistry registry) {
        for (KvSelectionResult r : KvSelectionResult.values()) {
            counters[r.ordinal()] = Counter.builder(NAME)
                    .description("KV-aware selections by what the KV step contributed")
                    .tag("result", r.label()).register(registry);
        }
    }

    void count(KvSelectionResult result) {
        counters[result.ordinal()].increment();
    }
}
