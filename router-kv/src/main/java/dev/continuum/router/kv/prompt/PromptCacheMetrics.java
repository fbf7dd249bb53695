package dev.continuum.router.kv.prompt;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * The segment cache's and the pipeline's steps' meters, every label value registered up front (closed sets):
 * <ul>
 *   <li>{@code continuum_dynamo_kv_segment_cache_lookups_total{result}}: {@code hit}, {@code miss}</li>
 *   <li>{@code continuum_dynamo_kv_segment_cache_evictions_total}</li>
 *   <li>{@code continuum_dynamo_kv_segment_cache_bytes} (gauge), {@code continuum_dynamo_kv_segment_cache_max_bytes}</li>
 *   <li>{@code continuum_dynamo_kv_prompt_tokens_total{source}}: {@code cache}, {@code encoded}</li>
 *   <li>{@code continuum_dynamo_kv_tokenizer_segmented_total{result}}: {@code segmented}, {@code whole} (per load:
 *       whether the premise held)</li>
 *   <li>{@code continuum_dynamo_kv_render_cache_lookups_total{result}}: {@code hit}, {@code miss};
 *       {@code continuum_dynamo_kv_render_cache_evictions_total}; {@code continuum_dynamo_kv_render_cache_bytes},
 *       {@code continuum_dynamo_kv_render_cache_max_bytes}</li>
 *   <li>{@code continuum_dynamo_kv_template_probes_total{result}}: {@code cut}, {@code whole} (per template load)</li>
 *   <li>{@code continuum_dynamo_kv_prompt_render_seconds}, {@code continuum_dynamo_kv_prompt_tokenize_seconds}
 *       (histograms)</li>
 * </ul>
 */
final class PromptCacheMetrics implements SegmentedTokenizer.Stats, SegmentCache.Listener {
    private final Counter renderHits;
    private final Counter renderMisses;
    private final Counter renderEvictions;
    private final Counter templatesCut;
    private final Counter templatesWhole;
    private final Counter hits;
    private final Counter misses;
    private final Counter evictions;
    private final Counter fromCache;
    private final Counter encoded;
    private final Counter segmentedLoads;
    private final Counter segmentsOnlyLoads;
    private final Counter wholeLoads;
    final Timer render;
    final Timer tokenize;

    PromptCacheMetrics(MeterRegistry registry) {
        hits = lookups(registry, "hit");
        misses = lookups(registry, "miss");
        evictions = Counter.builder("continuum.dynamo.kv.segment.cache.evictions")
                .description("Segment cache entries evicted (least recently used first)").register(registry);
        fromCache = tokens(registry, "cache");
        encoded = tokens(registry, "encoded");
        segmentedLoads = loads(registry, "segmented");
        segmentsOnlyLoads = loads(registry, "segments_only");
        wholeLoads = loads(registry, "whole");
        renderHits = renderLookups(registry, "hit");
        renderMisses = renderLookups(registry, "miss");
        renderEvictions = Counter.builder("continuum.dynamo.kv.render.cache.evictions")
                .description("Render cache entries evicted (least recently used first)").register(registry);
        templatesCut = probes(registry, "cut");
        templatesWhole = probes(registry, "whole");
        render = timer(registry, "continuum.dynamo.kv.prompt.render", "Chat-template render time per prompt");
        tokenize = timer(registry, "continuum.dynamo.kv.prompt.tokenize", "Tokenization time per prompt");
    }

    /** The byte gauges of {@code cache}. */
    void watch(MeterRegistry registry, SegmentCache cache) {
        Gauge.builder("continuum.dynamo.kv.segment.cache.bytes", cache, SegmentCache::bytes)
                .description("Bytes the segment cache holds").baseUnit("bytes").register(registry);
        Gauge.builder("continuum.dynamo.kv.segment.cache.max.bytes", cache, SegmentCache::maxBytes)
                .description("The segment cache's bound (dynamo.kv.segment_cache_bytes)").baseUnit("bytes")
                .register(registry);
    }

    /** The render cache's byte gauges. */
    void watchRender(MeterRegistry registry, RenderCache cache) {
        Gauge.builder("continuum.dynamo.kv.render.cache.bytes", cache, RenderCache::bytes)
                .description("Bytes the render cache holds").baseUnit("bytes").register(registry);
        Gauge.builder("continuum.dynamo.kv.render.cache.max.bytes", cache, RenderCache::maxBytes)
                .description("The render cache's bound (dynamo.kv.render_cache_bytes)").baseUnit("bytes")
                .register(registry);
    }

    SegmentCache.Listener renderListener() {
        return renderEvictions::increment;
    }

    /** A render cache lookup: whether some prefix of the conversation was cached. */
    void renderLookup(boolean hit) {
        (hit ? renderHits : renderMisses).increment();
    }

    /** A template probed at load: whether render-once may cut it anywhere. */
    void probed(boolean cuttable) {
        (cuttable ? templatesCut : templatesWhole).increment();
    }

    private static Counter renderLookups(MeterRegistry registry, String result) {
        return Counter.builder("continuum.dynamo.kv.render.cache.lookups").tag("result", result)
                .description("Render cache lookups, by whether a prefix of the conversation was cached")
                .register(registry);
    }

    private static Counter probes(MeterRegistry registry, String result) {
        return Counter.builder("continuum.dynamo.kv.template.probes").tag("result", result)
                .description("Chat templates probed at load, by whether render-once may cut them")
                .register(registry);
    }

    private static Counter lookups(MeterRegistry registry, String result) {
        return Counter.builder("continuum.dynamo.kv.segment.cache.lookups").tag("result", result)
                .description("Segment cache lookups, by result").register(registry);
    }

    private static Counter tokens(MeterRegistry registry, String source) {
        return Counter.builder("continuum.dynamo.kv.prompt.tokens").tag("source", source)
                .description("Prompt token IDs, by where they came from").register(registry);
    }

    private static Counter loads(MeterRegistry registry, String result) {
        return Counter.builder("continuum.dynamo.kv.tokenizer.segmented").tag("result", result)
                .description("Tokenizer loads, by whether whole and segmented encodes agreed on the probes")
                .register(registry);
    }

    private static Timer timer(MeterRegistry registry, String name, String description) {
        return Timer.builder(name).description(description).publishPercentileHistogram()
                .minimumExpectedValue(java.time.Duration.ofMillis(1).dividedBy(10))
                .maximumExpectedValue(java.time.Duration.ofSeconds(2)).register(registry);
    }

    /** A tokenizer loaded: segmented (and cut into chunks), segmented only (failed the chunk check), or whole. */
    void loaded(boolean segmented, boolean chunked) {
        (!segmented ? wholeLoads : chunked ? segmentedLoads : segmentsOnlyLoads).increment();
    }

    @Override
    public void segments(int hitCount, int missCount) {
        if (hitCount > 0) {
            hits.increment(hitCount);
        }
        if (missCount > 0) {
            misses.increment(missCount);
        }
    }

    @Override
    public void tokens(long cached, long encodedCount) {
        if (cached > 0) {
            fromCache.increment(cached);
        }
        if (encodedCount > 0) {
            encoded.increment(encodedCount);
        }
    }

    @Override
    public void evicted(long entries) {
        evictions.increment(entries);
    }

    static void record(Timer timer, long nanos) {
        timer.record(nanos, TimeUnit.NANOSECONDS);
    }
}
