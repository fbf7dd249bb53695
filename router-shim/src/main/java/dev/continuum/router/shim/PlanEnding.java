package dev.continuum.router.shim;

import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.shim.decisions.DecisionLog;
import org.jspecify.annotations.Nullable;

/**
 * A shim plan's listener: passes the first response bytes and the plan's end to the selection's dispatch (its
 * active sequence and ledger entries) and the first bytes to the decision record's time-to-first-token
 * observation, and counts the end in the disaggregated metrics.
 */
final class PlanEnding implements DispatchPlan.Listener {
    private final Selection.Dispatch dispatch;
    private final RoutingPath path;
    private final DisaggregatedMetrics metrics;
    private final @Nullable DecisionLog decisions;
    private final long decisionId;

    PlanEnding(Selection.Dispatch dispatch, RoutingPath path, DisaggregatedMetrics metrics) {
        this(dispatch, path, metrics, null, -1);
    }

    /** With the decision record (id {@code decisionId} in {@code decisions}, -1 for none) the first bytes time. */
    PlanEnding(Selection.Dispatch dispatch, RoutingPath path, DisaggregatedMetrics metrics,
            @Nullable DecisionLog decisions, long decisionId) {
        this.dispatch = dispatch;
        this.path = path;
        this.metrics = metrics;
        this.decisions = decisions;
        this.decisionId = decisionId;
    }

    @Override
    public void firstBytes() {
        dispatch.firstToken();
        if (decisions != null && decisionId >= 0) {
            decisions.firstBytes(decisionId);
        }
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
