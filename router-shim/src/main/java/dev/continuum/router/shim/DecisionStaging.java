package dev.continuum.router.shim;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One thread's copy of the terms of the decision it is making, filled by the pickers after each phase's scoring
 * loop (never inside it) while {@link #active}, and turned into a record by {@link DecisionRecorder}. Lives in
 * the pickers' per-thread scratch space and is reused, so staging allocates nothing at steady state.
 */
final class DecisionStaging {
    static final byte FRESH = 0;
    static final byte QUIET = 1;
    static final byte SILENT = 2;
    static final byte STALLED = 3;
    static final String[] STATES = {"fresh", "quiet", "silent", "stalled"};

    /** Set by the recorder for the pick about to run; pickers copy terms only while it is set. */
    boolean active;
    /** The KV picker's result for this pick, or null (the load-only picker decided). */
    @Nullable KvSelectionResult result;
    int phases;
    final Phase[] phase = {new Phase(), new Phase()};

    /** The terms of one scored phase, in the picker's candidate order. */
    static final class Phase {
        String kind = "";
        boolean kv;
        int n;
        int winner;
        double draw = Double.NaN;
        long isl;
        long[] workerId = new long[0];
        int[] dpRank = new int[0];
        long[] sampleBacklog = new long[0];
        long[] ledgerTokens = new long[0];
        long[] ledgerBlocks = new long[0];
        int[] overlap = new int[0];
        long[] blockSize = new long[0];
        double[] credited = new double[0];
        double[] adjusted = new double[0];
        double[] decode = new double[0];
        double[] cost = new double[0];
        /** The load part of the cost (the formula at overlap 0, without this request's own blocks). */
        double[] busy = new double[0];
        byte[] state = new byte[0];
        boolean[] eligible = new boolean[0];
        /** Working copy of costs for trimming a record to its budget. */
        double[] sorted = new double[0];

        void size(int count) {
            n = count;
            if (workerId.length < count) {
                int s = Math.max(count, workerId.length * 2);
                workerId = new long[s];
                dpRank = new int[s];
                sampleBacklog = new long[s];
                ledgerTokens = new long[s];
                ledgerBlocks = new long[s];
                overlap = new int[s];
                blockSize = new long[s];
                credited = new double[s];
                adjusted = new double[s];
                decode = new double[s];
                cost = new double[s];
                busy = new double[s];
                state = new byte[s];
                eligible = new boolean[s];
                sorted = new double[s];
            }
        }

        /** The cost at or below which the {@code keep} cheapest candidates fall (NaN costs sort last). */
        double threshold(int keep) {
            System.arraycopy(cost, 0, sorted, 0, n);
            Arrays.sort(sorted, 0, n);
            return sorted[Math.max(0, Math.min(keep, n) - 1)];
        }
    }

    /** Starts a pick: forget the last one's phases. */
    void begin(boolean record) {
        active = record;
        result = null;
        phases = 0;
    }

    /** The next phase's buffer sized for {@code n} candidates, or null when two are already staged. */
    Phase next(String kind, boolean kv, int n, long isl) {
        Phase p = phase[Math.min(phases, 1)];
        phases = Math.min(phases + 1, 2);
        p.kind = kind;
        p.kv = kv;
        p.size(n);
        p.isl = isl;
        p.draw = Double.NaN;
        return p;
    }
}
