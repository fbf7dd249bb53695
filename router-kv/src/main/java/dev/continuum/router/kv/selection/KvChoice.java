package dev.continuum.router.kv.selection;

import dev.continuum.router.proxy.BackendChooser;
import java.util.List;

/**
 * One request's prompt, ready to be scored at each pick of its first phase (the first send and its retries). Only
 * the first pick is counted. Used on the request's event loop only.
 */
final class KvChoice implements BackendChooser.Choice {
    private final BackendKvScorer scorer;
    private final SelectionMetrics metrics;
    private final Long[] prompt;
    private final double overlapCredit;
    private final double prefillScale;
    private boolean counted;

    KvChoice(BackendKvScorer scorer, SelectionMetrics metrics, Long[] prompt, double overlapCredit,
            double prefillScale) {
        this.scorer = scorer;
        this.metrics = metrics;
        this.prompt = prompt;
        this.overlapCredit = overlapCredit;
        this.prefillScale = prefillScale;
    }

    @Override
    public int choose(List<? extends BackendChooser.Candidate> available) {
        long r = scorer.choose(available, prompt, overlapCredit, prefillScale);
        boolean first = !counted;
        counted = true;
        if (first) {
            metrics.chose((int) (r >>> 32), prompt.length);
        }
        return (int) r;
    }
}
