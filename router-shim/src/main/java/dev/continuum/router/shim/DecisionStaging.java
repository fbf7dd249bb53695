package dev.continuum.router.shim;

import dev.continuum.router.shim.decisions.DecisionSettings;
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
        /** The candidates a record keeps, by {@link #keep}: fixed size, so choosing them never allocates. */
        final int[] kept = new int[DecisionSettings.MAX_CANDIDATES + 1];

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
            }
        }

        /**
         * Fills {@link #kept} with the winner and the {@code others} cheapest other eligible candidates (ties to
         * the earlier one), in the picker's order, and returns how many it holds. A bounded max-heap over the
         * candidates: n log(others) comparisons, no allocation.
         */
        int keep(int others) {
            int m = Math.max(0, Math.min(others, kept.length - 1));
            int size = 0;
            for (int k = 0; k < n && m > 0; k++) {
                if (k == winner || !eligible[k] || Double.isNaN(cost[k])) {
                    continue;
                }
                if (size < m) {
                    int i = size++;
                    while (i > 0 && dearer(k, kept[(i - 1) >> 1])) {
                        kept[i] = kept[(i - 1) >> 1];
                        i = (i - 1) >> 1;
                    }
                    kept[i] = k;
                } else if (dearer(kept[0], k)) {
                    siftDown(k, size);
                }
            }
            if (winner >= 0 && winner < n) {
                kept[size++] = winner;
            }
            for (int i = 1; i < size; i++) { // at most 65 entries: insertion sort into the picker's order
                int v = kept[i];
                int j = i - 1;
                while (j >= 0 && kept[j] > v) {
                    kept[j + 1] = kept[j];
                    j--;
                }
                kept[j + 1] = v;
            }
            return size;
        }

        /** Puts {@code k} at the heap's root and sifts it down among {@code size} entries. */
        private void siftDown(int k, int size) {
            int i = 0;
            while (true) {
                int c = 2 * i + 1;
                if (c >= size) {
                    break;
                }
                if (c + 1 < size && dearer(kept[c + 1], kept[c])) {
                    c++;
                }
                if (!dearer(kept[c], k)) {
                    break;
                }
                kept[i] = kept[c];
                i = c;
            }
            kept[i] = k;
        }

        /** Whether candidate {@code a} ranks after {@code b}: a higher cost, or the same cost later in order. */
        private boolean dearer(int a, int b) {
            return cost[a] > cost[b] || (cost[a] == cost[b] && a > b);
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
