package dev.continuum.router.shim;

/**
 * Copies one scored phase from a picker's scratch space into the thread's {@link DecisionStaging}: called once
 * per phase after the scoring loop, only while a record is wanted, so the loop itself stays as it was. The terms
 * the picker did not keep (credit, adjusted prefill, decode term) are recomputed here from what it did keep, with
 * the same formulas ({@link KvCosts}).
 */
final class DecisionCapture {
    private DecisionCapture() {
    }

    /** A phase the KV formula scored; {@code anyFresh} false means every rank competed without load. */
    static void kvPhase(DecisionStaging st, KvAwarePicker.Phase phase, LoadBasedPicker.Scratch parts, int nParts,
            int n, KvAwarePicker.KvScratch kv, boolean anyFresh, int winner, double draw, long isl,
            KvPickerSettings set) {
        DecisionStaging.Phase p = st.next(phase.name().toLowerCase(java.util.Locale.ROOT), true, n, isl);
        p.winner = winner;
        p.draw = draw;
        int k = 0;
        for (int part = 0; part < nParts; part++) {
            CandidateRanks ranks = parts.parts[part];
            for (int i = 0; i < ranks.size; i++, k++) {
                p.workerId[k] = ranks.pins[i].worker().instanceId();
                p.dpRank[k] = (int) ranks.pins[i].dpRank();
                long bs = Math.max(1, kv.blockSize[k]);
                int ov = kv.overlap[k];
                p.sampleBacklog[k] = kv.backlog[k];
                p.ledgerTokens[k] = kv.ledgerTokens[k];
                p.ledgerBlocks[k] = kv.ledgerBlocks[k];
                p.overlap[k] = ov;
                p.blockSize[k] = bs;
                p.credited[k] = set.overlapScoreCredit() * ov;
                p.cost[k] = kv.eligible[k] || kv.defined[k] ? kv.costs[k] : Double.NaN;
                p.eligible[k] = kv.eligible[k];
                p.state[k] = !anyFresh ? (kv.backlog[k] >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET)
                        : !kv.defined[k] ? DecisionStaging.SILENT
                        : kv.stalled[k] ? DecisionStaging.STALLED
                        : kv.backlog[k] >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET;
                long prefillTokens;
                long decodeBacklog;
                switch (phase) {
                    case PREFILL -> {
                        prefillTokens = LoadCosts.add(Math.max(0, kv.backlog[k]), kv.ledgerTokens[k]);
                        decodeBacklog = Math.max(0, kv.other[k]);
                    }
                    case AGGREGATED -> {
                        prefillTokens = LoadCosts.add(Math.max(0, kv.other[k]), kv.ledgerTokens[k]);
                        decodeBacklog = LoadCosts.add(Math.max(0, kv.backlog[k]), kv.ledgerBlocks[k]);
                    }
                    default -> {
                        prefillTokens = 0;
                        decodeBacklog = LoadCosts.add(Math.max(0, kv.backlog[k]), kv.ledgerBlocks[k]);
                    }
                }
                if (!anyFresh) {
                    prefillTokens = 0;
                    decodeBacklog = 0;
                }
                boolean prefillTerm = phase != KvAwarePicker.Phase.CONDITIONAL_DECODE;
                double raw = (double) LoadCosts.add(prefillTokens, isl) / bs;
                p.adjusted[k] = prefillTerm ? Math.max(0, raw - p.credited[k]) : 0;
                p.decode[k] = anyFresh ? KvCosts.decode(decodeBacklog, isl, bs, ov) : 0;
                p.busy[k] = (prefillTerm ? set.prefillLoadScale() * prefillTokens / bs : 0) + decodeBacklog;
            }
        }
    }

    /** A phase the load-only formula scored (costs NaN where a rank had none). */
    static void loadPhase(DecisionStaging st, boolean decode, LoadBasedPicker.Scratch s, int nParts, int n,
            boolean anyUnstalled, int winner, long est) {
        DecisionStaging.Phase p = st.next(decode ? "decode_load" : "prefill_load", false, n, est);
        p.winner = winner;
        int k = 0;
        for (int part = 0; part < nParts; part++) {
            CandidateRanks ranks = s.parts[part];
            for (int i = 0; i < ranks.size; i++, k++) {
                p.workerId[k] = ranks.pins[i].worker().instanceId();
                p.dpRank[k] = (int) ranks.pins[i].dpRank();
                p.sampleBacklog[k] = s.backlog[k];
                p.ledgerTokens[k] = decode ? 0 : s.pending[k];
                p.ledgerBlocks[k] = decode ? s.pending[k] : 0;
                p.overlap[k] = 0;
                p.blockSize[k] = ranks.costBlockSize[i];
                p.credited[k] = 0;
                p.adjusted[k] = 0;
                p.decode[k] = 0;
                double c = s.costs[k];
                p.cost[k] = c;
                p.busy[k] = c;
                boolean defined = !Double.isNaN(c);
                p.eligible[k] = defined && !(anyUnstalled && s.stalled[k]);
                p.state[k] = !defined ? DecisionStaging.SILENT
                        : s.stalled[k] ? DecisionStaging.STALLED
                        : s.backlog[k] >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET;
            }
        }
    }
}
