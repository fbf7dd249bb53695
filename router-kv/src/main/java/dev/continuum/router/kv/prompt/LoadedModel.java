package dev.continuum.router.kv.prompt;

import java.util.concurrent.atomic.AtomicInteger;

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
    private final long artifactBytes;
    private final AtomicInteger references = new AtomicInteger(1);
    private volatile long lastUsedNanos;

    LoadedModel(String key, PromptTokenizer tokenizer, ChatTemplates templates, long artifactBytes, long nowNanos) {
        this.key = key;
        this.tokenizer = tokenizer;
        this.templates = templates;
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
