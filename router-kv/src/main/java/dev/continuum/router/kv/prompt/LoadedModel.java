package dev.continuum.router.kv.prompt;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One artifact set, loaded: its tokenizer and chat templates, shared by every request of the models that use
 * it. The tokenizer holds native memory, so the model counts its users: the cache holds one reference and each
 * request in flight one more, and the tokenizer closes when the last is released (an eviction never closes a
 * tokenizer under a running encode).
 *
 * @see ModelCache
 */
final class LoadedModel {
    private final String key;
    private final PromptTokenizer tokenizer;
    private final ChatTemplates templates;
    private final @Nullable AddedTokens added;
    private final Map<String, PrefixRender.Shape> shapes;
    private final long artifactBytes;
    private final AtomicInteger references = new AtomicInteger(1);
    private volatile long lastUsedNanos;

    LoadedModel(String key, PromptTokenizer tokenizer, ChatTemplates templates, long artifactBytes, long nowNanos) {
        this(key, tokenizer, templates, null, Map.of(), artifactBytes, nowNanos);
    }

    /**
     * @param added  the tokenizer's added tokens when it passed the segment check (token IDs may be joined), else null
     * @param shapes what the render-once probes found for each template, by the template's text
     */
    LoadedModel(String key, PromptTokenizer tokenizer, ChatTemplates templates, @Nullable AddedTokens added,
                Map<String, PrefixRender.Shape> shapes, long artifactBytes, long nowNanos) {
        this.key = key;
        this.tokenizer = tokenizer;
        this.templates = templates;
        this.added = added;
        this.shapes = Map.copyOf(shapes);
        this.artifactBytes = artifactBytes;
        this.lastUsedNanos = nowNanos;
    }

    String key() {
        return key;
    }

    PromptTokenizer tokenizer() {
        return tokenizer;
    }

    ChatTemplates templates() {
        return templates;
    }

    /** The added tokens when token IDs may be joined at segment boundaries, else null. */
    @Nullable AddedTokens added() {
        return added;
    }

    /** What the probes found for {@code template}, or null when it is never cut (render whole). */
    PrefixRender.@Nullable Shape shape(String template) {
        PrefixRender.Shape shape = shapes.get(template);
        return shape == null || added == null || !shape.cuttable() ? null : shape;
    }

    long artifactBytes() {
        return artifactBytes;
    }

    long lastUsedNanos() {
        return lastUsedNanos;
    }

    /** Takes a reference for one request; false once the model is released by its last holder. */
    boolean retain(long nowNanos) {
        for (int n = references.get(); n > 0; n = references.get()) {
            if (references.compareAndSet(n, n + 1)) {
                lastUsedNanos = nowNanos;
                return true;
            }
        }
        return false;
    }

    /** Drops one reference; the last one closes the tokenizer. */
    void release() {
        if (references.decrementAndGet() == 0) {
            tokenizer.close();
        }
    }
}
