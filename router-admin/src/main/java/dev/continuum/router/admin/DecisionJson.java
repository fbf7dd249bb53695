package dev.continuum.router.admin;

import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import dev.continuum.router.shim.decisions.TtftPrediction;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The JSON shape of decision records (docs/admin-api.md, "Decision records"): instance IDs in lower-case hex as
 * {@code /admin/dynamo/workers} writes them, costs that were not defined as null.
 */
final class DecisionJson {
    private DecisionJson() {
    }

    /** The list view: everything but the candidates' terms. */
    static Map<String, Object> summary(DecisionRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", Long.toString(r.id()));
        m.put("at", Instant.ofEpochMilli(r.epochMillis()).toString());
        m.put("model", r.model());
        m.put("namespace", r.namespace());
        m.put("result", r.result());
        m.put("fallback", r.fallback());
        m.put("decode_reason", r.decodeReason());
        m.put("prefill_reason", r.prefillReason());
        m.put("decode_worker", hex(r.decodeWorker()));
        m.put("decode_rank", r.decodeRank());
        m.put("prefill_worker", r.prefillWorker() == -1 ? null : hex(r.prefillWorker()));
        m.put("prefill_rank", r.prefillRank() < 0 ? null : r.prefillRank());
        DecisionRecord.PromptStats p = r.prompt();
        Map<String, Object> prompt = new LinkedHashMap<>();
        prompt.put("estimated_tokens", p.estimatedTokens());
        prompt.put("tokens", p.promptTokens() < 0 ? null : p.promptTokens());
        prompt.put("blocks", p.promptBlocks() < 0 ? null : p.promptBlocks());
        prompt.put("block_size", p.blockSize() < 0 ? null : p.blockSize());
        prompt.put("render_ms", p.renderNanos() < 0 ? null : p.renderNanos() / 1e6);
        prompt.put("tokenize_ms", p.tokenizeNanos() < 0 ? null : p.tokenizeNanos() / 1e6);
        m.put("prompt", prompt);
        m.put("winner_overlap_blocks", r.winnerOverlap());
        m.put("best_overlap_blocks", r.bestOverlap());
        m.put("avoidable_prefill_tokens", r.avoidableTokens());
        TtftPrediction t = r.ttft();
        if (t == null) {
            m.put("ttft", null);
        } else {
            Map<String, Object> ttft = new LinkedHashMap<>();
            ttft.put("worker", hex(t.workerId()));
            ttft.put("dp_rank", t.dpRank());
            ttft.put("work_tokens", t.workTokens());
            ttft.put("basis", t.basis().label());
            ttft.put("predicted_ms", t.predictedNanos() < 0 ? null : t.predictedNanos() / 1e6);
            ttft.put("observed_ms", t.observedNanos() < 0 ? null : t.observedNanos() / 1e6);
            m.put("ttft", ttft);
        }
        return m;
    }

    /** The detail view: the summary with every phase's candidates. */
    static Map<String, Object> detail(DecisionRecord r) {
        Map<String, Object> m = summary(r);
        List<Object> phases = new ArrayList<>();
        for (PhaseTerms p : r.phases()) {
            Map<String, Object> phase = new LinkedHashMap<>();
            phase.put("phase", p.phase());
            phase.put("winner", p.winner());
            phase.put("temperature_draw", finite(p.temperatureDraw()));
            phase.put("omitted", p.omitted());
            List<Object> candidates = new ArrayList<>();
            for (RankTerms t : p.candidates()) {
                candidates.add(terms(t));
            }
            phase.put("candidates", candidates);
            phases.add(phase);
        }
        m.put("phases", phases);
        return m;
    }

    private static Map<String, Object> terms(RankTerms t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("worker", hex(t.workerId()));
        m.put("dp_rank", t.dpRank());
        m.put("state", t.state());
        m.put("eligible", t.eligible());
        m.put("sample_backlog", t.sampleBacklog() < 0 ? null : t.sampleBacklog());
        m.put("ledger_tokens", t.ledgerTokens());
        m.put("ledger_blocks", t.ledgerBlocks());
        m.put("active_sequences", t.activeSequences() < 0 ? null : t.activeSequences());
        m.put("overlap_blocks", t.overlapBlocks());
        m.put("block_size", t.blockSize());
        m.put("credited_prefill", finite(t.creditedPrefill()));
        m.put("adjusted_prefill", finite(t.adjustedPrefill()));
        m.put("decode_blocks", finite(t.decodeBlocks()));
        m.put("cost", finite(t.cost()));
        return m;
    }

    static Map<String, Object> totals(DecisionLog.Totals t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("recorded", t.recorded());
        m.put("held_bytes", t.heldBytes());
        m.put("capacity", t.capacity());
        m.put("avoidable_prefill_tokens", t.avoidableTokens());
        m.put("winner_overlap_blocks", t.winnerOverlapBlocks());
        m.put("best_overlap_blocks", t.bestOverlapBlocks());
        m.put("scored_prompt_tokens", t.scoredPromptTokens());
        m.put("by_result", t.byResult());
        return m;
    }

    private static @Nullable Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    static String hex(long instanceId) {
        return Long.toHexString(instanceId);
    }
}
