package dev.continuum.router.shim;

import dev.continuum.router.shim.decisions.CandidateTerms;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import dev.continuum.router.shim.decisions.TtftPrediction;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Turns the terms a pick staged ({@link DecisionStaging}) into an immutable {@link DecisionRecord} in the
 * {@link DecisionLog}, after the pick: {@link #begin} before {@code picker.pick}, {@link #commit} after it, on the
 * same thread. The only allocation is the record itself: its phases' candidate terms, packed in two exact-size
 * primitive arrays a phase ({@link CandidateTerms}), and their immutable wrappers.
 */
final class DecisionRecorder {
    private final DecisionLog log;
    private final LongSupplier wallMillis;

    DecisionRecorder(DecisionLog log, LongSupplier wallMillis) {
        this.log = Objects.requireNonNull(log, "log");
        this.wallMillis = Objects.requireNonNull(wallMillis, "wallMillis");
    }

    DecisionLog log() {
        return log;
    }

    /** Arms this thread's staging for the pick about to run; returns the settings read for it. */
    DecisionSettings begin() {
        DecisionSettings s = log.settings();
        // Capture holds as many others as a one-phase record could keep; commit trims a two-phase record further.
        LoadBasedPicker.scratch().staging.begin(s.enabled(),
                Math.min(s.candidatesPerPhase(), s.candidatesPerRecord() - 1));
        return s;
    }

    /** Records the pick just made on this thread and returns its id, or -1 when recording is off. */
    long commit(DecisionSettings s, PickRequest request, Selection selection) {
        DecisionStaging st = LoadBasedPicker.scratch().staging;
        if (!st.active) {
            return -1;
        }
        st.active = false;
        int phases = st.phases;
        // Each phase keeps its winner and up to candidates_per_phase others, fewer if the byte share is smaller.
        int budget = Math.max(1, s.candidatesPerRecord() / Math.max(1, phases));
        int others = Math.min(s.candidatesPerPhase(), budget - 1);
        PhaseTerms one = phases > 0 ? phase(st.phase[0], others) : null;
        PhaseTerms two = phases > 1 ? phase(st.phase[1], others) : null;
        List<PhaseTerms> terms = one == null ? List.of() : two == null ? List.of(one) : List.of(one, two);
        int bytes = DecisionRecord.BASE_BYTES;
        for (int i = 0; i < terms.size(); i++) {
            bytes += terms.get(i).candidates().size() * RankTerms.ESTIMATED_BYTES;
        }
        // Quality is judged on the phase that prefills: the last one the KV formula scored.
        DecisionStaging.Phase prefilling = null;
        for (int i = 0; i < phases; i++) {
            if (st.phase[i].kv && st.phase[i].n > 0) {
                prefilling = st.phase[i];
            }
        }
        int winnerOverlap = prefilling == null ? 0 : prefilling.winnerOverlap;
        int bestOverlap = prefilling == null ? 0 : prefilling.bestOverlap;
        long avoidable = prefilling == null ? 0 : prefilling.avoidable;
        // The time to first token is predicted for the rank that prefills: the winner of the last phase scored.
        TtftPrediction ttft = null;
        if (phases > 0) {
            DecisionStaging.Phase last = st.phase[phases - 1];
            ttft = log.predict(last.workerId[last.others], last.dpRank[last.others], last.winnerWork);
        }
        PromptBlocks prompt = request.prompt();
        BlockHashes first = prompt == null || prompt.blockHashes().isEmpty() ? null : prompt.blockHashes().get(0);
        DecisionRecord.PromptStats stats = new DecisionRecord.PromptStats(request.estimatedPromptTokens(),
                prompt == null ? -1 : prompt.promptTokens(), first == null ? -1 : first.blocks(),
                first == null ? -1 : first.blockSize(), -1, -1);
        KvSelectionResult result = st.result;
        KvSelectionResult fallback = request.kvFallback();
        if (fallback == null && result != null && isFallback(result)) {
            fallback = result;
        }
        WorkerPin prefill = selection.prefill();
        String model = request.model();
        if (model.length() > DecisionRecord.MAX_MODEL_CHARS) {
            model = model.substring(0, DecisionRecord.MAX_MODEL_CHARS);
        }
        long id = log.nextId();
        log.add(new DecisionRecord(id, wallMillis.getAsLong(), model, selection.namespace(),
                result == null ? "load" : result.label(), fallback == null ? null : fallback.label(),
                selection.decodeReason().label(), selection.prefillReason().label(),
                selection.decode().worker().instanceId(), (int) selection.decode().dpRank(),
                prefill == null ? -1 : prefill.worker().instanceId(), prefill == null ? -1 : (int) prefill.dpRank(),
                stats, terms, winnerOverlap, bestOverlap, avoidable, ttft, bytes));
        return id;
    }

    private static boolean isFallback(KvSelectionResult r) {
        return r != KvSelectionResult.OVERLAP && r != KvSelectionResult.NO_OVERLAP && r != KvSelectionResult.BYPASS;
    }

    /** The phase's terms: its winner and the {@code others} cheapest eligible others, in the picker's order. */
    private static PhaseTerms phase(DecisionStaging.Phase p, int others) {
        int size = p.emit(others);
        CandidateTerms out = new CandidateTerms(size);
        int winner = 0;
        for (int j = 0; j < size; j++) {
            int s = p.emitted[j];
            if (s == p.others) {
                winner = j;
            }
            out.put(j, p.workerId[s], p.dpRank[s], p.sampleBacklog[s], p.ledgerTokens[s], p.ledgerBlocks[s],
                    p.active[s], p.overlap[s], p.blockSize[s], p.credited[s], p.adjusted[s], p.decode[s], p.state[s],
                    p.cost[s], p.eligible[s]);
        }
        return PhaseTerms.owning(p.kind, out, p.n - size, winner, p.draw);
    }

    /** Stops this thread's staging after a pick that chose nothing. */
    static void disarm() {
        LoadBasedPicker.scratch().staging.active = false;
    }
}
