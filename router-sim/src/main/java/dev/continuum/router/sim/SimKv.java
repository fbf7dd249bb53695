package dev.continuum.router.sim;

import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Turns on the simulated workers' KV caches: each prefill or aggregated worker tokenizes the prompts it serves
 * with {@code tokenizerJson}, keeps a {@link PrefixCache} of {@code total_kv_blocks} blocks per rank, publishes
 * kv-events, and takes {@code prefillBase + prefillPerToken × uncached tokens} to prefill, one prompt after
 * another per rank (docs/simulator.md, "KV caches").
 *
 * <p>With {@code reportPrefillBacklog}, each such worker's kv_metrics also carry {@code active_prefill_tokens}:
 * the prompt tokens its ranks still have to prefill. dynamo.vllm workers send nil there (the field is the KV
 * router's own view upstream); the option models an engine that reports its prefill queue, so that a picker
 * can tell a long queue from a longer one (docs/simulator.md, "Load signal").
 *
 * @param tokenizerJson       the model's {@code tokenizer.json}; also named (with its BLAKE3) on the model card
 * @param tokenizerConfigJson the model's {@code tokenizer_config.json}, named on the card as its prompt formatter
 *                            when given (a router needs it to render the chat template)
 * @param prefillBase         fixed cost of one prefill
 * @param prefillPerToken     cost of each uncached prompt token
 * @param reportPrefillBacklog whether kv_metrics carry {@code active_prefill_tokens} (else nil, as dynamo.vllm)
 * @param publishKvEvents     whether the workers register a kv-events event channel (else the fleet offers none, as
 *                            when a router cannot reach the publishers: the caches still run, unseen)
 * @param vllmEvents          when set, each caching worker also publishes vLLM's own KV events in this encoding,
 *                            with a replay socket, as a plain vLLM server does ({@link VllmKvPublisher})
 */
public record SimKv(Path tokenizerJson, @Nullable Path tokenizerConfigJson, Duration prefillBase,
                    Duration prefillPerToken, boolean reportPrefillBacklog, boolean publishKvEvents,
                    @Nullable VllmKvGeneration vllmEvents) {
    /** With a kv-events channel, without vLLM-native events. */
    public SimKv(Path tokenizerJson, @Nullable Path tokenizerConfigJson, Duration prefillBase,
            Duration prefillPerToken, boolean reportPrefillBacklog) {
        this(tokenizerJson, tokenizerConfigJson, prefillBase, prefillPerToken, reportPrefillBacklog, true, null);
    }

    /** Without {@code active_prefill_tokens} in kv_metrics, as dynamo.vllm workers publish them. */
    public SimKv(Path tokenizerJson, @Nullable Path tokenizerConfigJson, Duration prefillBase,
            Duration prefillPerToken) {
        this(tokenizerJson, tokenizerConfigJson, prefillBase, prefillPerToken, false);
    }

    public SimKv {
        if (prefillBase.isNegative()) {
            throw new IllegalArgumentException("prefillBase: " + prefillBase + " (expected: >= 0)");
        }
        if (prefillPerToken.isNegative()) {
            throw new IllegalArgumentException("prefillPerToken: " + prefillPerToken + " (expected: >= 0)");
        }
    }

    /** 20 ms per prefill plus 50 µs per uncached token (about 20,000 prompt tokens a second per rank). */
    public static SimKv of(Path tokenizerJson, @Nullable Path tokenizerConfigJson) {
        return new SimKv(tokenizerJson, tokenizerConfigJson, Duration.ofMillis(20), Duration.ofNanos(50_000));
    }

    public SimKv withPrefill(Duration base, Duration perToken) {
        return new SimKv(tokenizerJson, tokenizerConfigJson, base, perToken, reportPrefillBacklog, publishKvEvents,
                vllmEvents);
    }

    public SimKv withPrefillBacklog(boolean report) {
        return new SimKv(tokenizerJson, tokenizerConfigJson, prefillBase, prefillPerToken, report, publishKvEvents, vllmEvents);
    }

    /** Whether the workers register their kv-events channel (off: a fleet without kv-events). */
    public SimKv withKvEvents(boolean publish) {
        return new SimKv(tokenizerJson, tokenizerConfigJson, prefillBase, prefillPerToken, reportPrefillBacklog,
                publish, vllmEvents);
    }

    /** Each caching worker also publishes vLLM-native KV events in {@code generation} (null: not). */
    public SimKv withVllmEvents(@Nullable VllmKvGeneration generation) {
        return new SimKv(tokenizerJson, tokenizerConfigJson, prefillBase, prefillPerToken, reportPrefillBacklog,
                publishKvEvents, generation);
    }
}
