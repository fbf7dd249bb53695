package dev.continuum.router.shim;

import dev.continuum.router.shim.decisions.CandidateTerms;
import dev.continuum.router.shim.decisions.DecisionSettings;
import org.jspecify.annotations.Nullable;

/**
 * One thread's copy of the decision it is making, filled by {@link DecisionCapture} after each phase's scoring
 * loop (never inside it) while {@link #active}, and turned into a record by {@link DecisionRecorder}. It holds
 * only the candidates a record can keep (the winner and at most {@link #cap} cheapest eligible others, chosen
 * from the picker's own arrays) and the phase's quality figures, in fixed-size arrays: staging never allocates
 * and never copies the terms of a candidate the record will not keep.
 */
final class DecisionStaging {
    /** A candidate's state: an index of {@link CandidateTerms#STATES}. */
    static final byte FRESH = 0;
    static final byte QUIET = 1;
    static final byte SILENT = 2;
    static final byte STALLED = 3;

    /** Set by the recorder for the pick about to run; pickers capture only while it is set. */
    boolean active;
    /** The most non-winning candidates a phase of this pick's record can keep. */
    int cap;
    /** The KV picker's result for this pick, or null (the load-only picker decided). */
    @Nullable KvSelectionResult result;
    int phases;
    final Phase[] phase = {new Phase(), new Phase()};

    /**
     * One scored phase: the kept candidates' terms by slot. Slots {@code 0 .. others-1} hold the cheapest eligible
     * non-winners in cost order (ties to the earlier candidate); slot {@code others} holds the winner.
     */
    static final class Phase {
        static final int SLOTS = DecisionSettings.MAX_CANDIDATES + 1;

        String kind = "";
        boolean kv;
        /** The candidates the picker scored (kept or not). */
        int n;
        /** The winner's position in the picker's order. */
        int winner;
        double draw = Double.NaN;
        long isl;
        /** Quality figures of a KV phase, over every candidate: see {@link DecisionCapture#kvPhase}. */
        int winnerOverlap;
        int bestOverlap;
        long avoidable;
        /** Prompt tokens the winner had to prefill before this request's first token: its backlog and ours. */
        long winnerWork;

        /** Candidates held, in cost order (ties in the picker's order). */
        int others;
        private int cap;
        /** Each slot's position in the picker's order, and the cost it was offered at. */
        final int[] position = new int[SLOTS];
        private final double[] offered = new double[SLOTS];
        /** The slots a record emits, in the picker's order ({@link #emit}). */
        final int[] emitted = new int[SLOTS];

        final long[] workerId = new long[SLOTS];
        final int[] dpRank = new int[SLOTS];
        final long[] sampleBacklog = new long[SLOTS];
        final long[] ledgerTokens = new long[SLOTS];
        final long[] ledgerBlocks = new long[SLOTS];
        final long[] active = new long[SLOTS];
        final int[] overlap = new int[SLOTS];
        final long[] blockSize = new long[SLOTS];
        final double[] credited = new double[SLOTS];
        final double[] adjusted = new double[SLOTS];
        final double[] decode = new double[SLOTS];
        final double[] cost = new double[SLOTS];
        final byte[] state = new byte[SLOTS];
        final boolean[] eligible = new boolean[SLOTS];

        /** Starts choosing: at most {@code cap} non-winners will be held. */
        void start(int cap) {
            this.cap = Math.max(0, Math.min(cap, SLOTS - 1));
            others = 0;
            winnerOverlap = 0;
            bestOverlap = 0;
            avoidable = 0;
            winnerWork = 0;
        }

        /**
         * Whether a candidate of cost {@code c}, later in the picker's order than every one offered so far, would be
         * held: the capture's loops ask this before {@link #offer}, so most of a large phase costs one comparison.
         */
        boolean admits(double c) {
            return c < bar();
        }

        /**
         * The cost a candidate later in the picker's order than every one offered so far must be below to be held:
         * infinite while there is room, the dearest held cost once full (an equal cost later in order ranks after
         * it), negative infinity when nothing may be held. NaN is never below it. The capture's loops keep it in a
         * local and refresh it after each {@link #offer}, so a rejected candidate costs one comparison.
         */
        double bar() {
            return others < cap ? Double.POSITIVE_INFINITY : cap > 0 ? offered[cap - 1] : Double.NEGATIVE_INFINITY;
        }

        /**
         * Offers candidate {@code k} (eligible, not the winner, with a defined cost), in the picker's order: held
         * while it is among the {@code cap} cheapest offered. An insertion into the cost-ordered slots (at most
         * {@code cap} moves of two arrays, no allocation); when full, the dearest held one drops out. A candidate
         * that is not below {@link #bar} is ignored.
         */
        void offer(int k, double c) {
            if (!(c < bar())) {
                return;
            }
            int i = others < cap ? others++ : cap - 1;
            // An equal cost offered earlier came earlier in the picker's order: it stays ahead.
            while (i > 0 && offered[i - 1] > c) {
                position[i] = position[i - 1];
                offered[i] = offered[i - 1];
                i--;
            }
            position[i] = k;
            offered[i] = c;
        }

        /** Puts the winner in slot {@link #others} after the held candidates; returns the slots used. */
        int finish() {
            position[others] = winner;
            return others + 1;
        }

        /**
         * Fills {@link #emitted} with the winner's slot and the {@code keep} cheapest others' (all held when fewer),
         * in the picker's order; returns how many.
         */
        int emit(int keep) {
            int size = 0;
            int m = Math.max(0, Math.min(keep, others));
            for (int s = 0; s < m; s++) {
                emitted[size++] = s;
            }
            emitted[size++] = others;
            for (int i = 1; i < size; i++) {
                int v = emitted[i];
                int j = i - 1;
                while (j >= 0 && position[emitted[j]] > position[v]) {
                    emitted[j + 1] = emitted[j];
                    j--;
                }
                emitted[j + 1] = v;
            }
            return size;
        }
    }

    /** Starts a pick: forget the last one's phases. */
    void begin(boolean record, int cap) {
        active = record;
        this.cap = cap;
        result = null;
        phases = 0;
    }

    /** The next phase's buffer for {@code n} candidates (the second is reused past two phases). */
    Phase next(String kind, boolean kv, int n, int winner, long isl) {
        Phase p = phase[Math.min(phases, 1)];
        phases = Math.min(phases + 1, 2);
        p.kind = kind;
        p.kv = kv;
        p.n = n;
        p.winner = winner;
        p.isl = isl;
        p.draw = Double.NaN;
        p.start(cap);
        return p;
    }
}
