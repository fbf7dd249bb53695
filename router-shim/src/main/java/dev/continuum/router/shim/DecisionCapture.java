package dev.continuum.router.shim;

/**
 * Captures one scored phase from a picker's scratch space into the thread's {@link DecisionStaging}: called once
 * per phase after the scoring loop, only while a record is wanted, so the loop itself stays as it was. One pass
 * over the picker's own cost and eligibility arrays chooses the candidates the record can keep and, for the KV
 * formula, sums the quality figures; the full terms are then derived for those few only. The terms the picker did
 * not keep (credit, adjusted prefill, decode term) are recomputed from what it did keep, with the same formulas
 * ({@link KvCosts}).
 */
final class DecisionCapture {
    private static final String[] KV_KINDS = {"prefill", "aggregated", "conditional_decode"};

    private DecisionCapture() {
    }

    /**
     * A phase the KV formula scored; {@code anyFresh} false means every rank competed without load. Quality, over
     * every candidate: the winner's overlap, the best eligible overlap, and the prompt tokens an eligible candidate
     * no busier than the winner ({@link #busy}: no more prefill work queued) held beyond what the winner held.
     */
    static void kvPhase(DecisionStaging st, KvAwarePicker.Phase phase, LoadBasedPicker.Scratch parts, int nParts,
            int n, KvAwarePicker.KvScratch kv, boolean anyFresh, int winner, double draw, long isl,
            KvPickerSettings set) {
        DecisionStaging.Phase p = st.next(KV_KINDS[phase.ordinal()], true, n, winner, isl);
        p.draw = draw;
        int winnerOverlap = kv.overlap[winner];
        long held = Math.min(isl, (long) winnerOverlap * Math.max(1, kv.blockSize[winner]));
        double winnerBusy = Double.NaN; // computed on the first candidate that could beat the winner's hold
        long bestHeld = held;
        int bestOverlap = winnerOverlap;
        boolean[] eligible = kv.eligible;
        double[] costs = kv.costs;
        double bar = p.bar();
        for (int k = 0; k < n; k++) {
            if (!eligible[k]) {
                continue;
            }
            int ov = kv.overlap[k];
            bestOverlap = Math.max(bestOverlap, ov);
            long h = Math.min(isl, (long) ov * Math.max(1, kv.blockSize[k]));
            if (h > bestHeld) {
                if (Double.isNaN(winnerBusy)) {
                    winnerBusy = busy(phase, kv, winner, anyFresh);
                }
                if (busy(phase, kv, k, anyFresh) <= winnerBusy) {
                    bestHeld = h;
                }
            }
            double c = costs[k];
            if (c < bar && k != winner) {
                p.offer(k, c);
                bar = p.bar();
            }
        }
        p.winnerOverlap = winnerOverlap;
        p.bestOverlap = bestOverlap;
        p.avoidable = bestHeld - held;
        p.winnerWork = LoadCosts.add(prefillTokens(phase, kv, winner, anyFresh), isl - held);
        int slots = p.finish();
        for (int s = 0; s < slots; s++) {
            kvTerms(p, s, phase, parts, nParts, kv, anyFresh, isl, set);
        }
    }

    private static void kvTerms(DecisionStaging.Phase p, int s, KvAwarePicker.Phase phase,
            LoadBasedPicker.Scratch parts, int nParts, KvAwarePicker.KvScratch kv, boolean anyFresh, long isl,
            KvPickerSettings set) {
        int k = p.position[s];
        pin(p, s, parts, nParts, k);
        long bs = Math.max(1, kv.blockSize[k]);
        int ov = kv.overlap[k];
        p.sampleBacklog[s] = kv.backlog[k];
        p.ledgerTokens[s] = kv.ledgerTokens[k];
        p.ledgerBlocks[s] = kv.ledgerBlocks[k];
        p.active[s] = kv.active[k];
        p.overlap[s] = ov;
        p.blockSize[s] = bs;
        p.credited[s] = set.overlapScoreCredit() * ov;
        p.cost[s] = kv.eligible[k] || kv.defined[k] ? kv.costs[k] : Double.NaN;
        p.eligible[s] = kv.eligible[k];
        p.state[s] = !anyFresh ? (kv.backlog[k] >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET)
                : !kv.defined[k] ? DecisionStaging.SILENT
                : kv.stalled[k] ? DecisionStaging.STALLED
                : kv.backlog[k] >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET;
        boolean prefillTerm = phase != KvAwarePicker.Phase.CONDITIONAL_DECODE;
        double raw = (double) LoadCosts.add(prefillTokens(phase, kv, k, anyFresh), isl) / bs;
        p.adjusted[s] = prefillTerm ? Math.max(0, raw - p.credited[s]) : 0;
        p.decode[s] = anyFresh ? KvCosts.decode(decodeBacklog(phase, kv, k, anyFresh), isl, bs, ov) : 0;
    }

    /**
     * How busy candidate {@code k} was, for the avoidable-token count: the prefill backlog the formula counted, in
     * tokens (the work a request waits behind before its own prefill starts); under conditional disaggregation,
     * whose decode rank prefills only what a bypass leaves it, the decode backlog. Not the whole load part of the
     * cost: with it, a rank with more overlap and no more load always costs less, so at temperature 0 the count
     * would be 0 by construction and would never show the decode term outweighing a cached prefix.
     */
    private static double busy(KvAwarePicker.Phase phase, KvAwarePicker.KvScratch kv, int k, boolean anyFresh) {
        return phase == KvAwarePicker.Phase.CONDITIONAL_DECODE ? decodeBacklog(phase, kv, k, anyFresh)
                : prefillTokens(phase, kv, k, anyFresh);
    }

    /**
     * The prefill backlog the formula counted for {@code k}, as the picker left it: {@link LoadCosts#backlog} of
     * sample, ledger and active sequences, less the in-flight share (docs/kv-routing.md, "The formula").
     */
    private static long prefillTokens(KvAwarePicker.Phase phase, KvAwarePicker.KvScratch kv, int k, boolean anyFresh) {
        return !anyFresh || phase == KvAwarePicker.Phase.CONDITIONAL_DECODE ? 0 : kv.prefillUsed[k];
    }

    /** The decode backlog the formula counted for {@code k}, as the picker left it. */
    private static long decodeBacklog(KvAwarePicker.Phase phase, KvAwarePicker.KvScratch kv, int k, boolean anyFresh) {
        return anyFresh ? kv.decodeUsed[k] : 0;
    }

    /**
     * A phase the load-only formula scored (costs NaN where a rank had none). The ledger's term of a kept candidate
     * whose cost did not need it (no active sequence of ours there) is read now, at {@code now}, against the sample
     * the cost used: the scoring pass skips that read for the candidates a record does not keep.
     */
    static void loadPhase(DecisionStaging st, boolean decode, LoadBasedPicker.Scratch sc, int nParts, int n,
            boolean anyUnstalled, int winner, long est, long now) {
        DecisionStaging.Phase p = st.next(decode ? "decode_load" : "prefill_load", false, n, winner, est);
        // A decode sample counts blocks, not prompt tokens: a unified load-only pick's work is the prompt alone. A
        // prefill rank's is the backlog its cost used ({@link LoadCosts#backlog} of its three sources).
        p.winnerWork = decode ? est : LoadCosts.add(sc.term(winner, LoadBasedPicker.Scratch.USED), est);
        double[] costs = sc.costs;
        boolean[] stalled = sc.stalled;
        double bar = p.bar();
        for (int k = 0; k < n; k++) {
            double c = costs[k];
            if (c < bar && k != winner && !(anyUnstalled && stalled[k])) { // NaN (no cost) is never below the bar
                p.offer(k, c);
                bar = p.bar();
            }
        }
        int slots = p.finish();
        for (int s = 0; s < slots; s++) {
            int k = p.position[s];
            int i = k;
            CandidateRanks ranks = sc.parts[0];
            for (int part = 0; part < nParts && i >= (ranks = sc.parts[part]).size; part++) {
                i -= ranks.size;
            }
            p.workerId[s] = ranks.pins[i].worker().instanceId();
            p.dpRank[s] = (int) ranks.pins[i].dpRank();
            long sampled = sc.term(k, LoadBasedPicker.Scratch.BACKLOG);
            long pending = sc.term(k, LoadBasedPicker.Scratch.PENDING);
            if (pending == LoadBasedPicker.Scratch.UNREAD) {
                long lastSample = sc.term(k, LoadBasedPicker.Scratch.SAMPLE);
                pending = decode ? ranks.ledgers[i].pendingBlocks(lastSample, now)
                        : ranks.ledgers[i].pendingTokens(lastSample, now);
            }
            p.sampleBacklog[s] = sampled;
            p.ledgerTokens[s] = decode ? 0 : pending;
            p.ledgerBlocks[s] = decode ? pending : 0;
            p.active[s] = sc.term(k, LoadBasedPicker.Scratch.ACTIVE);
            p.overlap[s] = 0;
            p.blockSize[s] = ranks.costBlockSize[i];
            p.credited[s] = 0;
            p.adjusted[s] = 0;
            p.decode[s] = 0;
            double c = costs[k];
            p.cost[s] = c;
            boolean defined = !Double.isNaN(c);
            p.eligible[s] = defined && !(anyUnstalled && stalled[k]);
            p.state[s] = !defined ? DecisionStaging.SILENT
                    : stalled[k] ? DecisionStaging.STALLED
                    : sampled >= 0 ? DecisionStaging.FRESH : DecisionStaging.QUIET;
        }
    }

    /** Copies the pin of the {@code k}-th candidate of the parts into slot {@code s}. */
    private static void pin(DecisionStaging.Phase p, int s, LoadBasedPicker.Scratch sc, int nParts, int k) {
        int left = k;
        for (int part = 0; part < nParts; part++) {
            CandidateRanks ranks = sc.parts[part];
            if (left < ranks.size) {
                p.workerId[s] = ranks.pins[left].worker().instanceId();
                p.dpRank[s] = (int) ranks.pins[left].dpRank();
                return;
            }
            left -= ranks.size;
        }
    }
}
