package dev.continuum.router.shim;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * {@code continuum_dynamo_selection_total{role,reason}}: role is {@code prefill} or {@code decode}, reason one
 * of {@link SelectionReason}. The series the load-based picker can produce are registered up front (a scrape
 * shows them at zero before the first request); a reason no code records yet ({@code kv_aware},
 * {@code conditional_bypass}, and {@code no_prefill_pool} for decode) is exported only once something
 * records it, so no series sits at a zero it can never leave.
 */
final class SelectionMetrics {
    static final String SELECTIONS = "continuum.dynamo.selection";

    /** What the load-based picker records: every reason but the KV-aware picker's. */
    static final Set<SelectionReason> LOAD_BASED = EnumSet.of(SelectionReason.LOAD,
            SelectionReason.ROUND_ROBIN_STALE, SelectionReason.ROUND_ROBIN_NO_SIGNAL);

    private final MeterRegistry registry;
    private final AtomicReferenceArray<Counter> prefill = new AtomicReferenceArray<>(SelectionReason.values().length);
    private final AtomicReferenceArray<Counter> decode = new AtomicReferenceArray<>(SelectionReason.values().length);

    SelectionMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        for (SelectionReason r : LOAD_BASED) {
            counter(decode, "decode", r);
            counter(prefill, "prefill", r);
        }
        counter(prefill, "prefill", SelectionReason.NO_PREFILL_POOL);
    }

    private Counter counter(AtomicReferenceArray<Counter> counters, String role, SelectionReason reason) {
        Counter c = counters.get(reason.ordinal());
        if (c == null) {
            // Registration is idempotent, so two threads racing here end up with the same counter.
            c = Counter.builder(SELECTIONS)
                    .description("Dynamo worker selections by role and reason")
                    .tag("role", role).tag("reason", reason.label()).register(registry);
            counters.set(reason.ordinal(), c);
        }
        return c;
    }

    void record(SelectionReason decodeReason, SelectionReason prefillReason) {
        counter(decode, "decode", decodeReason).increment();
        counter(prefill, "prefill", prefillReason).increment();
    }
}
