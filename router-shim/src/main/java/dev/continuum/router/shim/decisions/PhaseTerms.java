package dev.continuum.router.shim.decisions;

import java.util.List;
import java.util.Objects;

/**
 * One scored phase of a decision: its candidates' terms and which of them won.
 *
 * @param phase           {@code aggregated}, {@code prefill}, {@code conditional_decode} (KV formula) or
 *                        {@code decode_load}, {@code prefill_load} (load-only formula)
 * @param candidates      the candidates' terms, in the picker's order; at most the ring's per-record budget
 * @param omitted         candidates left out of {@code candidates} to keep the record within its byte budget
 *                        (the winner and the lowest costs are kept)
 * @param winner          the winner's position in {@code candidates}
 * @param temperatureDraw the uniform draw softmax sampling used, or NaN at temperature 0
 */
public record PhaseTerms(
        String phase,
        List<RankTerms> candidates,
        int omitted,
        int winner,
        double temperatureDraw) {
    public PhaseTerms {
        Objects.requireNonNull(phase, "phase");
        candidates = List.copyOf(candidates);
    }

    /** The winning rank's terms. */
    public RankTerms winning() {
        return candidates.get(winner);
    }
}
