package dev.continuum.router.shim;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The active sequences' meters, totals only (no rank label, so the cardinality stays fixed whatever the fleet):
 * <ul>
 *   <li>{@code continuum_dynamo_active_sequences}: sequences admitted by the drainer and not yet ended;</li>
 *   <li>{@code continuum_dynamo_active_prefill_tokens}, {@code continuum_dynamo_active_blocks}: the sums of
 *       every rank's counters (a disaggregated pair's blocks count on both of its ranks);</li>
 *   <li>{@code continuum_dynamo_active_sequence_expirations_total{reason}}: {@code lifetime} or
 *       {@code worker_left};</li>
 *   <li>{@code continuum_dynamo_active_sequences_untracked_total}: dispatches not tracked, the bound of
 *       {@link ActiveSequences#MAX_SEQUENCES} being reached.</li>
 * </ul>
 */
final class ActiveSequenceMetrics {
    private ActiveSequenceMetrics() {
    }

    static void register(MeterRegistry registry, ActiveSequences sequences) {
        Gauge.builder("continuum.dynamo.active.sequences", sequences, s -> s.liveSequences())
                .description("Requests this router dispatched that still count on their workers")
                .register(registry);
        Gauge.builder("continuum.dynamo.active.prefill.tokens", sequences, s -> s.totals().prefillTokens())
                .description("Uncached prompt tokens of active sequences before their first token, all ranks")
                .register(registry);
        Gauge.builder("continuum.dynamo.active.blocks", sequences, s -> s.totals().blocks())
                .description("KV blocks of active sequences, shared prefixes counted once per rank, all ranks")
                .register(registry);
        for (SequenceEnd reason : new SequenceEnd[] {SequenceEnd.EXPIRED, SequenceEnd.WORKER_LEFT}) {
            FunctionCounter.builder("continuum.dynamo.active.sequence.expirations", sequences,
                            s -> s.expired(reason))
                    .description("Active sequences ended by the router itself, by reason")
                    .tag("reason", reason.label()).register(registry);
        }
        FunctionCounter.builder("continuum.dynamo.active.sequences.untracked", sequences, s -> s.untracked())
                .description("Dispatches not tracked as active sequences (the bound was reached)")
                .register(registry);
    }
}
