package dev.continuum.router.shim;

import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Turns the terms a pick staged ({@link DecisionStaging}) into an immutable {@link DecisionRecord} in the
 * {@link DecisionLog}, after the pick: {@link #begin} before {@code picker.pick}, {@link #commit} after it, on the
 * same thread. The only allocation is the record itself (its lists and terms).
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
        LoadBasedPicker.scratch().staging.begin(s.enabled());
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
        int budget = Math.max(1, s.candidatesPerRecord() / Math.max(1, phases));
        List<PhaseTerms> terms = new ArrayList<>(phases);
        int bytes = DecisionRecord.BASE_BYTES;
        for (int i = 0; i < phases; i++) {
            PhaseTerms t = phase(st.phase[i], budget);
            terms.add(t);
            bytes += t.candidates().size() * RankTerms.ESTIMATED_BYTES;
        }
        // Quality is judged on the phase that prefills: the last one the KV formula scored.
        DecisionStaging.Phase prefilling = null;
        for (int i = 0; i < phases; i++) {
            if (st.phase[i].kv) {
                prefilling = st.phase[i];
            }
        }
        int winnerOverlap = 0;
        int bestOverlap = 0;
        long avoidable = 0;
        if (prefilling != null && prefilling.n > 0) {
            DecisionStaging.Phase p = prefilling;
            int w = p.winner;
            winnerOverlap = p.overlap[w];
            long held = Math.min(p.isl, (long) winnerOverlap * p.blockSize[w]);
            long bestHeld = held;
            for (int k = 0; k < p.n; k++) {
                if (!p.eligible[k]) {
                    continue;
                }
                bestOverlap = Math.max(bestOverlap, p.overlap[k]);
                if (p.busy[k] <= p.busy[w]) {
                    bestHeld = Math.max(bestHeld, Math.min(p.isl, (long) p.overlap[k] * p.blockSize[k]));
                }
            }
            bestOverlap = Math.max(bestOverlap, winnerOverlap);
            avoidable = bestHeld - held;
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
                stats, terms, winnerOverlap, bestOverlap, avoidable, bytes));
        return id;
    }

    private static boolean isFallback(KvSelectionResult r) {
        return r != KvSelectionResult.OVERLAP && r != KvSelectionResult.NO_OVERLAP && r != KvSelectionResult.BYPASS;
    }

    /** The phase's terms, trimmed to {@code budget} candidates: the winner and the cheapest others. */
    private static PhaseTerms phase(DecisionStaging.Phase p, int budget) {
        int n = p.n;
        double threshold = n > budget ? p.threshold(budget) : Double.NaN;
        List<RankTerms> out = new ArrayList<>(Math.min(n, budget));
        int winner = 0;
        int others = 0;
        for (int k = 0; k < n; k++) {
            boolean isWinner = k == p.winner;
            if (!isWinner && n > budget) {
                // NaN thresholds (more undefined costs than room) keep only defined costs below it: none.
                if (others >= budget - 1 || !(p.cost[k] <= threshold)) {
                    continue;
                }
                others++;
            }
            if (isWinner) {
                winner = out.size();
            }
            out.add(new RankTerms(p.workerId[k], p.dpRank[k], p.sampleBacklog[k], p.ledgerTokens[k],
                    p.ledgerBlocks[k], -1, p.overlap[k], p.blockSize[k], p.credited[k], p.adjusted[k], p.decode[k],
                    DecisionStaging.STATES[p.state[k]], p.cost[k], p.eligible[k]));
        }
        return new PhaseTerms(p.kind, out, n - out.size(), winner, p.draw);
    }

    /** Stops this thread's staging after a pick that chose nothing. */
    static void disarm() {
        LoadBasedPicker.scratch().staging.active = false;
    }
}
