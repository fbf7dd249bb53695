package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.lifecycle.LifecycleStack;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import dev.continuum.router.core.logging.LogSafe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import dev.continuum.router.kv.hash.PromptPrefix;
import dev.continuum.router.kv.hash.Sightings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's {@link PromptEncoder}: the chat template rendered with jinjava as transformers'
 * {@code apply_chat_template(messages, tools=..., add_generation_prompt=True, **chat_template_kwargs)} renders
 * it, then tokenized with DJL's Hugging Face tokenizers, every step bounded by {@link PromptLimits}
 * (docs/kv-prompt.md).
 *
 * <p>{@link #encode} costs the caller a map lookup and a hand-off: the body is parsed, rendered and tokenized
 * on the render pool. A model whose tokenizer is not loaded yet answers {@code TOKENIZER_UNAVAILABLE} at once
 * and starts the load in the background.
 */
public final class HuggingFacePromptEncoder extends StartStopSupport implements PromptEncoder {
    /** {@code continuum_dynamo_kv_tokenizer_loads_total{result}}: loaded, failed, too_large. */
    public static final String TOKENIZER_LOADS = "continuum.dynamo.kv.tokenizer.loads";
    /** {@code continuum_dynamo_kv_prompt_failures_total{reason}}: encodes that fell back, by reason. */
    public static final String PROMPT_FAILURES = "continuum.dynamo.kv.prompt.failures";
    /** The segment cache's bound until the first config generation applies {@code dynamo.kv.segment_cache_bytes}. */
    public static final long DEFAULT_SEGMENT_CACHE_BYTES = 64L << 20;
    /** The render cache's bound until the first config generation applies {@code dynamo.kv.render_cache_bytes}. */
    public static final long DEFAULT_RENDER_CACHE_BYTES = 64L << 20;
    private static final Logger LOG = LoggerFactory.getLogger(HuggingFacePromptEncoder.class);

    private final PromptLimits limits;
    private final LongSupplier nanoTime;
    private final MeterRegistry registry;
    private final ObjectMapper mapper;
    private final TemplateEngine engine;
    private final ModelCache models;
    private final RenderPool pool;
    /** By {@link PromptEncoding.Reason#ordinal()}. */
    private final Counter[] failures;
    private final Map<String, Counter> loads = new ConcurrentHashMap<>();
    private final PromptCacheMetrics cacheMetrics;
    private final SegmentCache segments;
    /** Pieces seen once: the segment cache admits a piece on its second sighting (2 MiB). */
    private final Sightings segmentSightings = new Sightings(1 << 18);
    private final RenderCache renders;
    private final PrefixRender prefixes;
    private final LifecycleStack stack = LifecycleStack.nested(HuggingFacePromptEncoder.class);

    /** Defaults: the global meter registry, the system clock, DJL's native library under the temp directory. */
    public HuggingFacePromptEncoder(PromptLimits limits) {
        this(limits, Metrics.globalRegistry, System::nanoTime,
                Path.of(System.getProperty("java.io.tmpdir"), "continuum-djl"));
    }

    /**
     * @param registry      where the load and failure counters go
     * @param nanoTime      the clock for deadlines, permit waits and the load retry
     * @param nativeCacheDir where DJL extracts its bundled native library (unless DJL_CACHE_DIR is set)
     */
    public HuggingFacePromptEncoder(PromptLimits limits, MeterRegistry registry, LongSupplier nanoTime,
                                    Path nativeCacheDir) {
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.registry = registry;
        this.mapper = ChatPrompt.mapper(limits);
        this.engine = new TemplateEngine(limits);
        DjlTokenizer.configureNative(nativeCacheDir);
        this.models = new ModelCache(limits, this::load, nanoTime, this::countLoad);
        this.pool = new RenderPool(limits, nanoTime, registry);
        this.cacheMetrics = new PromptCacheMetrics(registry);
        this.segments = new SegmentCache(DEFAULT_SEGMENT_CACHE_BYTES, cacheMetrics);
        cacheMetrics.watch(registry, segments);
        this.renders = new RenderCache(DEFAULT_RENDER_CACHE_BYTES, cacheMetrics.renderListener());
        cacheMetrics.watchRender(registry, renders);
        this.prefixes = new PrefixRender(renders, new Sightings(1 << 16), this::render, cacheMetrics::renderLookup);
        PromptEncoding.Reason[] reasons = PromptEncoding.Reason.values();
        this.failures = new Counter[reasons.length];
        for (PromptEncoding.Reason reason : reasons) {
            failures[reason.ordinal()] = Counter.builder(PROMPT_FAILURES).tag("reason", reason.label())
                    .description("Prompt encodes that fell back, by reason").register(registry);
        }
        // Every load outcome exported from the start, so a dashboard sees 0 rather than no series.
        for (String result : new String[] {"loaded", "failed", "too_large"}) {
            loadCounter(result);
        }
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        stack.push(models);
        stack.push(pool);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        return stack.stopAll();
    }

    @Override
    public CompletableFuture<PromptEncoding> encode(PromptArtifacts artifacts, byte[] chatBody) {
        long start = nanoTime.getAsLong();
        if (chatBody.length > limits.maxBodyBytes()) {
            return fallback(PromptEncoding.Reason.PROMPT_TOO_LARGE);
        }
        LoadedModel model = models.acquire(artifacts);
        if (model == null) {
            return fallback(PromptEncoding.Reason.TOKENIZER_UNAVAILABLE);
        }
        return pool.submit(start, deadline -> encode(model, chatBody, deadline), model::release)
                .thenApply(this::count);
    }

    @Override
    public boolean prepare(PromptArtifacts artifacts) {
        LoadedModel model = models.acquire(artifacts);
        if (model == null) {
            return false;
        }
        model.release();
        return true;
    }

    private PromptEncoding encode(LoadedModel model, byte[] chatBody, long deadlineNanos) {
        ChatPrompt prompt;
        try {
            prompt = ChatPrompt.parse(mapper, chatBody);
        } catch (ChatPrompt.Malformed e) {
            return Fallbacks.RENDER_UNAVAILABLE;
        }
        Optional<String> selected = model.templates().select(prompt.tools() != null);
        if (selected.isEmpty()) {
            return Fallbacks.RENDER_UNAVAILABLE;
        }
        String template = selected.get();
        try {
            PrefixRender.Shape shape = prefixes.enabled() ? model.shape(template) : null;
            AddedTokens added = model.added();
            if (shape == null || added == null) {
                Whole whole = renderWhole(model, template, prompt, deadlineNanos);
                return whole == null ? Fallbacks.PROMPT_TOO_LARGE : new PromptEncoding.Tokens(whole.ids());
            }
            long start = nanoTime.getAsLong();
            long[] keys = PrefixRender.keys(shape, chatBody, prompt.spans());
            PromptEncoding.Tokens reused = prefixes.reuse(shape, added, model.tokenizer(), template,
                    model.templates(), prompt, keys, limits, deadlineNanos);
            if (reused != null) {
                // render and tokenize of the new messages only: counted as one render
                PromptCacheMetrics.record(cacheMetrics.render, nanoTime.getAsLong() - start);
                return reused;
            }
            Whole whole = renderWhole(model, template, prompt, deadlineNanos);
            if (whole == null) {
                return Fallbacks.PROMPT_TOO_LARGE;
            }
            PromptPrefix next = prefixes.remember(shape, added, model.tokenizer(), template, model.templates(),
                    prompt, keys, whole.text(), whole.utf8Bytes(), whole.ids(), limits, deadlineNanos);
            return new PromptEncoding.Tokens(whole.ids(), next);
        } catch (TemplateFailure f) {
            return Fallbacks.of(f.reason());
        }
    }

    private record Whole(String text, int utf8Bytes, int[] ids) {
    }

    /** The whole conversation rendered and tokenized; null when the text is over its bound. */
    private @org.jspecify.annotations.Nullable Whole renderWhole(LoadedModel model, String template,
                                                                 ChatPrompt prompt, long deadlineNanos) {
        long renderStart = nanoTime.getAsLong();
        String text = render(template, model.templates(), prompt.messages(), prompt, true, deadlineNanos);
        long tokenizeStart = nanoTime.getAsLong();
        PromptCacheMetrics.record(cacheMetrics.render, tokenizeStart - renderStart);
        int utf8 = Utf8.length(text);
        if (utf8 > limits.maxRenderedBytes()) {
            return null;
        }
        int[] ids = model.tokenizer().encode(text, limits.maxTokens());
        PromptCacheMetrics.record(cacheMetrics.tokenize, nanoTime.getAsLong() - tokenizeStart);
        return new Whole(text, utf8, ids);
    }

    /** The rendered prompt text for {@code prompt} (tests and the reference corpus compare it). */
    String render(String template, ChatTemplates templates, ChatPrompt prompt, long deadlineNanos) {
        return render(template, templates, prompt.messages(), prompt, true, deadlineNanos);
    }

    /** {@code messages} rendered with {@code prompt}'s tools and kwargs, with or without the generation prompt. */
    String render(String template, ChatTemplates templates, java.util.List<Object> messages, ChatPrompt prompt,
                  boolean generationPrompt, long deadlineNanos) {
        Map<String, Object> bindings = new HashMap<>(templates.specialTokens());
        bindings.putAll(prompt.kwargs());
        bindings.put("messages", messages);
        if (prompt.tools() != null) {
            bindings.put("tools", prompt.tools());
        }
        bindings.put("add_generation_prompt", generationPrompt);
        RenderBudget budget = new RenderBudget(limits.renderBudget(), limits.renderHeapBytes(), deadlineNanos,
                nanoTime);
        return engine.render(template, bindings, budget);
    }

    /**
     * Drops the loaded tokenizers and templates of every artifact key {@code keep} rejects, as when an operator
     * removes a pin on reload; requests in flight finish with what they hold.
     */
    public void retainArtifacts(Predicate<String> keep) {
        models.retain(keep);
    }

    /**
     * Sets the segment cache's bound ({@code dynamo.kv.segment_cache_bytes}, on every config generation);
     * shrinking evicts at once and 0 turns the cache off (every prompt is tokenized whole).
     */
    @Override
    public void segmentCacheBytes(long maxBytes) {
        segments.resize(maxBytes);
    }

    /**
     * Sets the render cache's bound ({@code dynamo.kv.render_cache_bytes}); shrinking evicts at once and 0 turns
     * render-once off (every prompt is rendered whole).
     */
    @Override
    public void renderCacheBytes(long maxBytes) {
        renders.resize(maxBytes);
    }

    /** The render cache's bytes (tests, benchmarks check its bound). */
    long renderCacheHeldBytes() {
        return renders.bytes();
    }

    /** The segment cache (tests, benchmarks check its bound). */
    long segmentCacheHeldBytes() {
        return segments.bytes();
    }

    /** The render pool (tests check its permits). */
    RenderPool renderPool() {
        return pool;
    }

    private LoadedModel load(PromptArtifacts artifacts, long nowNanos) throws Exception {
        int maxFile = (int) Math.min(Integer.MAX_VALUE - 16, limits.maxArtifactBytes());
        byte[] tokenizerJson = ChatTemplates.readBounded(artifacts.tokenizerJson(), maxFile);
        ChatTemplates templates = ChatTemplates.read(mapper, artifacts.tokenizerConfig(), artifacts.chatTemplate(),
                maxFile);
        long bytes = tokenizerJson.length + size(artifacts.tokenizerConfig()) + size(artifacts.chatTemplate());
        DjlTokenizer djl = DjlTokenizer.load(tokenizerJson);
        String unsegmented;
        String unchunked;
        AddedTokens added;
        try {
            added = AddedTokens.read(mapper, tokenizerJson);
            unsegmented = SegmentedTokenizer.verify(djl, added);
            unchunked = unsegmented == null ? SegmentedTokenizer.verifyChunks(djl) : unsegmented;
        } catch (IOException | RuntimeException e) {
            djl.close();
            throw e;
        }
        cacheMetrics.loaded(unsegmented == null, unchunked == null);
        if (unsegmented != null) {
            LOG.warn("kv prompt: tokenizer {} runs without the segment cache: {}", LogSafe.escape(artifacts.key()),
                    LogSafe.escape(unsegmented));
        } else if (unchunked != null) {
            LOG.warn("kv prompt: tokenizer {} caches whole segments only, long ones are not cut into chunks: {}",
                    LogSafe.escape(artifacts.key()), LogSafe.escape(unchunked));
        }
        byte[] identity = SegmentedTokenizer.identityOf(tokenizerJson);
        PromptTokenizer tokenizer = new SegmentedTokenizer(djl, added, identity, segments, segmentSightings,
                cacheMetrics, unsegmented == null, unchunked == null);
        Map<String, PrefixRender.Shape> shapes = new HashMap<>();
        if (unsegmented == null) {
            for (String template : templates.named().values()) {
                PrefixRender.Shape shape = PrefixRender.shape(mapper, this::render, template, templates,
                        templateIdentity(identity, template, templates), nanoTime.getAsLong()
                                + limits.deadline().toNanos());
                cacheMetrics.probed(shape.cuttable());
                if (!shape.cuttable()) {
                    LOG.warn("kv prompt: a chat template of {} is rendered whole on every request: the render-once "
                            + "probes found no stable cut", LogSafe.escape(artifacts.key()));
                }
                shapes.put(template, shape);
            }
        }
        return new LoadedModel(artifacts.key(), tokenizer, templates, unsegmented == null ? added : null, shapes,
                bytes, nowNanos);
    }

    /** The first link of a render-cache key: the tokenizer, the template and the special tokens it sees. */
    private static byte[] templateIdentity(byte[] tokenizer, String template, ChatTemplates templates) {
        java.security.MessageDigest md = SegmentedTokenizer.sha256();
        md.update(tokenizer);
        md.update(template.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(new java.util.TreeMap<>(templates.specialTokens()).toString()
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return java.util.Arrays.copyOf(md.digest(), 16);
    }

    private static long size(Optional<Path> file) throws java.io.IOException {
        return file.isPresent() ? Files.size(file.get()) : 0;
    }

    private void countLoad(String result) {
        loadCounter(result).increment();
    }

    private Counter loadCounter(String result) {
        return loads.computeIfAbsent(result, r -> Counter.builder(TOKENIZER_LOADS).tag("result", r)
                .description("Tokenizer and chat-template loads, by outcome").register(registry));
    }

    private PromptEncoding count(PromptEncoding encoding) {
        if (encoding instanceof PromptEncoding.Fallback f) {
            failures[f.reason().ordinal()].increment();
        }
        return encoding;
    }

    private CompletableFuture<PromptEncoding> fallback(PromptEncoding.Reason reason) {
        failures[reason.ordinal()].increment();
        return CompletableFuture.completedFuture(Fallbacks.of(reason));
    }

    @Override
    protected String lifecycleName() {
        return "kv prompt encoder";
    }
}
