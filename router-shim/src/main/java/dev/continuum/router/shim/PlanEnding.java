package dev.continuum.router.shim;

import dev.continuum.router.proxy.DispatchPlan;

/**
 * A shim plan's listener: passes the first response bytes and the plan's end to the selection's dispatch (its
 * active sequence and ledger entries) and counts the end in the disaggregated metrics.
 */
final class PlanEnding implements DispatchPlan.Listener {
    private final Selection.Dispatch dispatch;
    private final RoutingPath path;
    private final DisaggregatedMetrics metrics;

    PlanEnding(Selection.Dispatch dispatch, RoutingPath path, DisaggregatedMetrics metrics) {
        this.dispatch = dispatch;
        this.path = path;
        this.metrics = metrics;
    }

    @Override
    public void firstBytes() {
        dispatch.firstToken();
    }

    @Override
    public void ended(DispatchPlan.Outcome outcome) {
        dispatch.ended(reason(outcome));
        metrics.ended(path, outcome);
    }

    static SequenceEnd reason(DispatchPlan.Outcome outcome) {
        return switch (outcome) {
            case SERVED -> SequenceEnd.COMPLETED;
            case ABANDONED -> SequenceEnd.CANCELLED;
            case RESENT, FELL_BACK -> SequenceEnd.MOVED;
            case FAILED, REFUSED -> SequenceEnd.FAILED;
        };
    }
}
