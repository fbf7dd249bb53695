package dev.continuum.router.shim;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code continuum_dynamo_selection_total{role,reason}}: role is {@code prefill} or {@code decode}, reason one
 * of {@link SelectionReason}; all twelve series are registered up front, so the label set is closed.
 */
final class SelectionMetrics {
    static final String SELECTIONS = "continuum.dynamo.selection";

    private final Counter[] prefill = new Counter[SelectionReason.values().length];
    private final Counter[] decode = new Counter[SelectionReason.values().length];

    SelectionMetrics(MeterRegistry registry) {
        for (SelectionReason r : SelectionReason.values()) {
            prefill[r.ordinal()] = counter(registry, "prefill", r);
            decode[r.ordinal()] = counter(registry, "decode", r);
        }
    }

    private static Counter counter(MeterRegistry registry, String role, SelectionReason reason) {
        return Counter.builder(SELECTIONS)
                .description("Dynamo worker selections by role and reason")
                .tag("role", role).tag("reason", reason.label()).register(registry);
    }

    void record(SelectionReason decodeReason, SelectionReason prefillReason) {
        decode[decodeReason.ordinal()].increment();
        prefill[prefillReason.ordinal()].increment();
    }
}
