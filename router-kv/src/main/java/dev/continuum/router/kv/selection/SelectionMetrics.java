package dev.continuum.router.kv.selection;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code continuum_kv_cache_index_selections_total{result}} and the prompt blocks chosen backends held
 * ({@code continuum_kv_cache_index_selection_cached_blocks_total} over
 * {@code continuum_kv_cache_index_selection_prompt_blocks_total}: the fleet's prefix hit rate as the index saw it).
 */
public final class SelectionMetrics {
    private final Counter[] results = new Counter[SelectionResult.values().length];
    private final Counter cachedBlocks;
    private final Counter promptBlocks;

    public SelectionMetrics(MeterRegistry registry) {
        for (SelectionResult r : SelectionResult.values()) {
            results[r.ordinal()] = Counter.builder("continuum.kv.cache.index.selections").tag("result", r.label())
                    .description("backends[] requests by how their backend was chosen: by the backend KV cache"
                            + " index, or by selection_strategy for the reason named")
                    .register(registry);
        }
        cachedBlocks = Counter.builder("continuum.kv.cache.index.selection.cached.blocks")
                .description("prompt blocks the index said the chosen backend held").register(registry);
        promptBlocks = Counter.builder("continuum.kv.cache.index.selection.prompt.blocks")
                .description("complete prompt blocks of requests the index chose for").register(registry);
    }

    void count(SelectionResult result) {
        results[result.ordinal()].increment();
    }

    /** One choice by the index: its prompt's blocks and those the chosen backend held. */
    void chose(int cached, int blocks) {
        count(cached > 0 ? SelectionResult.CACHED : SelectionResult.UNCACHED);
        cachedBlocks.increment(cached);
        promptBlocks.increment(blocks);
    }
}
