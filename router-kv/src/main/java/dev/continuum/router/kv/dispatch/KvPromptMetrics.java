package dev.continuum.router.kv.dispatch;

import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.kv.hash.BlockHashCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/** {@code continuum_dynamo_kv_prompts_total{result}}, every label registered up front. */
public final class KvPromptMetrics {
    public static final String NAME = "continuum_dynamo_kv_prompts";

    private final Map<PromptResult, Counter> counters = new EnumMap<>(PromptResult.class);

    public KvPromptMetrics(MeterRegistry registry) {
        for (PromptResult r : PromptResult.values()) {
            counters.put(r, Counter.builder(NAME).description("What the KV step did with a chat request's prompt")
                    .tag("result", r.label()).register(registry));
        }
    }

    /**
     * The block-hash cache with its meters: {@code continuum_dynamo_kv_block_hash_cache_lookups_total{result}}
     * ({@code hit}, {@code miss}), {@code ..._evictions_total}, {@code ..._bytes} and {@code ..._max_bytes}.
     */
    BlockHashCache blockHashCache(MeterRegistry registry, long maxBytes) {
        Counter hits = blockHashLookups(registry, "hit");
        Counter misses = blockHashLookups(registry, "miss");
        Counter evictions = Counter.builder("continuum.dynamo.kv.block.hash.cache.evictions")
                .description("Block-hash cache entries evicted (least recently used first)").register(registry);
        BlockHashCache cache = new BlockHashCache(maxBytes, evictions::increment,
                hit -> (hit ? hits : misses).increment());
        Gauge.builder("continuum.dynamo.kv.block.hash.cache.bytes", cache, BlockHashCache::bytes)
                .description("Bytes the block-hash cache holds").baseUnit("bytes").register(registry);
        Gauge.builder("continuum.dynamo.kv.block.hash.cache.max.bytes", cache, BlockHashCache::maxBytes)
                .description("The block-hash cache's bound (dynamo.kv.block_hash_cache_bytes)").baseUnit("bytes")
                .register(registry);
        return cache;
    }

    private static Counter blockHashLookups(MeterRegistry registry, String result) {
        return Counter.builder("continuum.dynamo.kv.block.hash.cache.lookups").tag("result", result)
                .description("Block-hash cache lookups of a reused prefix, by result").register(registry);
    }

    void count(PromptResult result) {
        Counter c = counters.get(result);
        if (c != null) {
            c.increment();
        }
    }

    void unavailable(ModelArtifacts.Why why) {
        count(why == ModelArtifacts.Why.ARTIFACT_UNPINNED ? PromptResult.ARTIFACT_UNPINNED
                : PromptResult.TOKENIZER_UNAVAILABLE);
    }

    void fallback(PromptEncoding.Reason reason) {
        count(switch (reason) {
            case TOKENIZER_UNAVAILABLE -> PromptResult.TOKENIZER_UNAVAILABLE;
            case PROMPT_TOO_LARGE -> PromptResult.PROMPT_TOO_LARGE;
            case RENDER_UNAVAILABLE -> PromptResult.RENDER_UNAVAILABLE;
        });
    }
}
