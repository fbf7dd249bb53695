package dev.continuum.router.shim.decisions;

import java.util.List;
import java.util.Objects;

/**
 * One scored phase of a decision: its candidates' terms and which of them won.
 *
 * @param phase           {@code aggregated}, {@code prefill}, {@code conditional_decode} (KV formula) or
 *                        {@code decode_load}, {@code prefill_load} (load-only formula)
 * @param candidates      the candidates' terms, in the picker's order; at most the ring's per-record budget
 * @param omitted         candidates left out of {@code candidates}: beyond {@code candidates_per_phase} or the
 *                        record's byte budget (the winner and the cheapest eligible others are kept)
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
        candidates = candidates instanceof CandidateTerms ? candidates : List.copyOf(candidates);
    }

    /**
     * A phase over {@code candidates} without copying them: the caller filled them at their exact size for this
     * record and hands them over (never writes them again).
     */
    public static PhaseTerms owning(String phase, CandidateTerms candidates, int omitted, int winner,
            double temperatureDraw) {
        return new PhaseTerms(phase, candidates, omitted, winner, temperatureDraw);
    }

    /** The winning rank's terms. */
    public RankTerms winning() {
        return candidates.get(winner);
    }
}
