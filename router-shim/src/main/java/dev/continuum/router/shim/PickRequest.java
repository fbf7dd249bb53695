package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a picker needs to know about one request.
 *
 * @param model                 the Dynamo model name to match against worker cards, after
 *                              {@code dynamo.shim.model_map} (the outbound body keeps the client's ID)
 * @param namespaces            the Dynamo namespaces whose shim pool has a usable replica for this request
 *                              (visibility, health and per-key policy already applied); others offer no
 *                              candidates, so a pair never lands in a graph the request cannot reach
 * @param estimatedPromptTokens see {@link dev.continuum.router.proxy.PromptTokens#estimate}
 * @param prompt                the rendered prompt's length and block hashes, or null when the KV pipeline did not
 *                              encode the request (KV routing off, no pinned artifacts, a fallback)
 * @param kvFallback            why the KV pipeline did not encode it (one of the fallback results of
 *                              {@link KvSelectionResult}), or null when it did or was not asked to
 * @param sessionRank           the decode rank the request's session is bound to (session affinity), or null: the
 *                              picker takes it while it is a candidate and not stalled, else picks as usual
 */
public record PickRequest(String model, Set<String> namespaces, long estimatedPromptTokens,
                          @Nullable PromptBlocks prompt, @Nullable KvSelectionResult kvFallback,
                          @Nullable SampleKey sessionRank) {
    /** A request without a session binding. */
    public PickRequest(String model, Set<String> namespaces, long estimatedPromptTokens,
            @Nullable PromptBlocks prompt, @Nullable KvSelectionResult kvFallback) {
        this(model, namespaces, estimatedPromptTokens, prompt, kvFallback, null);
    }

    /** A request the KV pipeline did not encode. */
    public PickRequest(String model, Set<String> namespaces, long estimatedPromptTokens) {
        this(model, namespaces, estimatedPromptTokens, null, null, null);
    }

    /** A request the KV pipeline encoded ({@code prompt}) or did not (null, reason unknown). */
    public PickRequest(String model, Set<String> namespaces, long estimatedPromptTokens,
            @Nullable PromptBlocks prompt) {
        this(model, namespaces, estimatedPromptTokens, prompt, null, null);
    }

    public PickRequest {
        Objects.requireNonNull(model, "model");
        namespaces = Set.copyOf(namespaces);
        if (estimatedPromptTokens < 0) {
            throw new IllegalArgumentException(
                    "estimatedPromptTokens: " + estimatedPromptTokens + " (expected: >= 0)");
        }
    }
}
