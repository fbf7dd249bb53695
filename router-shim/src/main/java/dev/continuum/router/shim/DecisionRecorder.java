package dev.continuum.router.shim;

import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.RecordSlot;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import java.util.function.LongSupplier;

/**
 * Turns the terms a pick staged ({@link DecisionStaging}) into a record in the {@link DecisionLog}, after the pick:
 * {@link #begin} before {@code picker.pick}, {@link #commit} after it, on the same thread. The record is written in
 * place into the ring slot its id maps to ({@link RecordSlot}), which the ring reuses: once the ring has gone round,
 * recording allocates nothing (the immutable record is built when a reader asks).
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
        KvSelectionResult result = st.result;
        KvSelectionResult fallback = request.kvFallback();
        if (fallback == null && result != null && isFallback(result)) {
            fallback = result;
        }
        long id = log.nextId();
        RecordSlot d = log.claim(id);
        if (d == null) {
            return id; // its ring slot is taken by a record a ring's length apart: see DecisionLog.claim
        }
        boolean filled = false;
        try {
            fill(d, id, s, st, request, selection, result, fallback);
            filled = true;
        } finally {
            log.keep(d, filled);
        }
        return id;
    }

    /** Writes the record of the pick staged in {@code st} into ring slot {@code d}. */
    private void fill(RecordSlot d, long id, DecisionSettings s, DecisionStaging st, PickRequest request,
            Selection selection, @Nullable KvSelectionResult result, @Nullable KvSelectionResult fallback) {
        WorkerPin prefill = selection.prefill();
        int phases = st.phases;
        d.start(id, wallMillis.getAsLong(), request.model(), selection.namespace(),
                result == null ? "load" : result.label(), fallback == null ? null : fallback.label(),
                selection.decodeReason().label(), selection.prefillReason().label(),
                selection.decode().worker().instanceId(), (int) selection.decode().dpRank(),
                prefill == null ? -1 : prefill.worker().instanceId(), prefill == null ? -1 : (int) prefill.dpRank());
        PromptBlocks prompt = request.prompt();
        BlockHashes first = prompt == null || prompt.blockHashes().isEmpty() ? null : prompt.blockHashes().get(0);
        d.prompt(request.estimatedPromptTokens(), prompt == null ? -1 : prompt.promptTokens(),
                first == null ? -1 : first.blocks(), first == null ? -1 : first.blockSize());
        // Each phase keeps its winner and up to candidates_per_phase others, fewer if the byte share is smaller.
        int budget = Math.max(1, s.candidatesPerRecord() / Math.max(1, phases));
        int others = Math.min(s.candidatesPerPhase(), budget - 1);
        for (int i = 0; i < phases; i++) {
            phase(d, st.phase[i], others);
        }
        // Quality is judged on the phase that prefills: the last one the KV formula scored.
        DecisionStaging.Phase prefilling = null;
        for (int i = 0; i < phases; i++) {
            if (st.phase[i].kv && st.phase[i].n > 0) {
                prefilling = st.phase[i];
            }
        }
        if (prefilling != null) {
            d.quality(prefilling.winnerOverlap, prefilling.bestOverlap, prefilling.avoidable);
        }
        // The time to first token is predicted for the rank that prefills: the winner of the last phase scored.
        if (phases > 0) {
            DecisionStaging.Phase last = st.phase[phases - 1];
            log.predict(d, last.workerId[last.others], last.dpRank[last.others], last.winnerWork);
        }
    }

    private static boolean isFallback(KvSelectionResult r) {
        return r != KvSelectionResult.OVERLAP && r != KvSelectionResult.NO_OVERLAP && r != KvSelectionResult.BYPASS;
    }

    /** Drafts a phase: its winner and the {@code others} cheapest eligible others, in the picker's order. */
    private static void phase(RecordSlot d, DecisionStaging.Phase p, int others) {
        int size = p.emit(others);
        int winner = 0;
        for (int j = 0; j < size; j++) {
            if (p.emitted[j] == p.others) {
                winner = j;
            }
        }
        d.phase(p.kind, size, p.n - size, winner, p.draw);
        for (int j = 0; j < size; j++) {
            int s = p.emitted[j];
            d.put(j, p.workerId[s], p.dpRank[s], p.sampleBacklog[s], p.ledgerTokens[s], p.ledgerBlocks[s],
                    p.active[s], p.overlap[s], p.blockSize[s], p.credited[s], p.adjusted[s], p.decode[s], p.state[s],
                    p.cost[s], p.eligible[s]);
        }
    }

    /** Stops this thread's staging after a pick that chose nothing. */
    static void disarm() {
        LoadBasedPicker.scratch().staging.active = false;
    }
}
