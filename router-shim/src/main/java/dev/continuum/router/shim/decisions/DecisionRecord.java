package dev.continuum.router.shim.decisions;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Why one routed request went where it did: the prompt's statistics, each scored phase's candidates and winner,
 * and the quality figures derived from them at decision time. Immutable; holds no prompt text, no worker address
 * and no client credential (workers are named by instance ID).
 *
 * @param id               the ring's sequence number, sent to the client as {@code x-continuum-decision-id}
 * @param epochMillis      when the decision was made (wall clock)
 * @param model            the worker model name the candidates were matched on (cut to {@link #MAX_MODEL_CHARS})
 * @param namespace        the winner's Dynamo namespace
 * @param result           the KV picker's result label ({@code overlap}, {@code no_overlap}, {@code bypass}, or a
 *                         fallback such as {@code tokenizer_unavailable}); {@code load} under the load-only picker
 * @param fallback         why the KV formula did not decide (a fallback result label), or null when it did or was
 *                         not asked to
 * @param decodeReason     the decode pin's selection reason label
 * @param prefillReason    the prefill pin's selection reason label
 * @param decodeWorker     the decode pin's instance ID
 * @param decodeRank       the decode pin's dp_rank
 * @param prefillWorker    the prefill pin's instance ID, -1 without a prefill pin
 * @param prefillRank      the prefill pin's dp_rank, -1 without a prefill pin
 * @param prompt           the prompt's statistics
 * @param phases           the scored phases, decode side first
 * @param winnerOverlap    leading blocks the prefilling winner held
 * @param bestOverlap      the most leading blocks any eligible candidate of that phase held
 * @param avoidableTokens  prompt tokens the prefilling winner had to prefill that an eligible candidate with no more
 *                         prefill backlog (the formula's, in tokens) of the same phase already held
 * @param ttft             the predicted time to first token of the rank that prefills and, once the first bytes
 *                         came back, the observed one; null when the picker staged no phase
 * @param estimatedBytes   what this record weighs on the heap, as the ring counts it
 */
public record DecisionRecord(
        long id,
        long epochMillis,
        String model,
        String namespace,
        String result,
        @Nullable String fallback,
        String decodeReason,
        String prefillReason,
        long decodeWorker,
        int decodeRank,
        long prefillWorker,
        int prefillRank,
        PromptStats prompt,
        List<PhaseTerms> phases,
        int winnerOverlap,
        int bestOverlap,
        long avoidableTokens,
        @Nullable TtftPrediction ttft,
        int estimatedBytes) {
    /** Model names longer than this are cut: a record's size stays bounded whatever a card declares. */
    public static final int MAX_MODEL_CHARS = 256;
    /**
     * What a record weighs before its candidates, as the ring counts it: the record (about 104 bytes), its prompt
     * statistics (56), two phases with their lists (about 150), the TTFT prediction (48) and a model name of up
     * to 256 characters (about 300), rounded up. Namespace and label strings are shared with the fleet view and the code.
     */
    public static final int BASE_BYTES = 752;

    public DecisionRecord {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(decodeReason, "decodeReason");
        Objects.requireNonNull(prefillReason, "prefillReason");
        Objects.requireNonNull(prompt, "prompt");
        phases = List.copyOf(phases);
    }

    /** Whether either pin is the worker {@code instanceId}. */
    public boolean pins(long instanceId) {
        return decodeWorker == instanceId || prefillWorker == instanceId;
    }

    /**
     * The request's prompt as the picker saw it; -1 where it was not measured.
     *
     * @param estimatedTokens the proxy's estimate of the prompt's tokens (always present)
     * @param promptTokens    the rendered prompt's tokens, -1 when the KV pipeline did not encode it
     * @param promptBlocks    the prompt's blocks at its first block size, -1 when not encoded
     * @param blockSize       that block size, -1 when not encoded
     * @param renderNanos     time spent rendering the chat template; -1: the prompt stage does not report it yet
     * @param tokenizeNanos   time spent tokenizing; -1: the prompt stage does not report it yet
     */
    public record PromptStats(long estimatedTokens, int promptTokens, long promptBlocks, long blockSize,
                              long renderNanos, long tokenizeNanos) {
    }
}
