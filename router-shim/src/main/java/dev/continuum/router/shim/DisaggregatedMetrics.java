package dev.continuum.router.shim;

import dev.continuum.router.proxy.DispatchPlan;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code disaggregated_requests_total{routing_path}} (once per request the orchestrator saw) and
 * {@code disaggregated_errors_total{phase}} ({@code orchestration}: the direct-mode prefill refusal;
 * {@code decode}: any other failure of the shim path). Phase histograms stay unwritten: the phases run inside
 * the shim.
 */
final class DisaggregatedMetrics {
    static final String REQUESTS = "disaggregated.requests";
    static final String ERRORS = "disaggregated.errors";

    private final Counter[] requests = new Counter[RoutingPath.values().length];
    private final Counter orchestrationErrors;
    private final Counter decodeErrors;

    DisaggregatedMetrics(MeterRegistry registry) {
        for (RoutingPath p : RoutingPath.values()) {
            requests[p.ordinal()] = Counter.builder(REQUESTS)
                    .description("Chat completions seen by the disaggregated orchestrator, by the path that served them")
                    .tag("routing_path", p.label()).register(registry);
        }
        orchestrationErrors = error(registry, "orchestration");
        decodeErrors = error(registry, "decode");
    }

    private static Counter error(MeterRegistry registry, String phase) {
        return Counter.builder(ERRORS).description("Failures of the disaggregated serving path, by phase")
                .tag("phase", phase).register(registry);
    }

    void request(RoutingPath path) {
        requests[path.ordinal()].increment();
    }

    void ended(RoutingPath planned, DispatchPlan.Outcome outcome) {
        if (outcome == DispatchPlan.Outcome.RESENT) {
            return; // one send of a converted request; the request is counted by its last plan
        }
        switch (outcome) {
            case REFUSED -> orchestrationErrors.increment();
            case FELL_BACK, FAILED -> decodeErrors.increment();
            case SERVED, ABANDONED, RESENT -> { }
        }
        request(outcome == DispatchPlan.Outcome.FELL_BACK ? RoutingPath.FALLBACK : planned);
    }
}
