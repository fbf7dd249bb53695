package dev.continuum.router.kv.dispatch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.kv.artifacts.ModelArtifactResolver;
import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.KvSelectionResult;
import dev.continuum.router.shim.PromptBlocks;
import dev.continuum.router.shim.ShimConfig;
import dev.continuum.router.shim.ShimDispatcher;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shim dispatch with the KV step in front: for a model whose workers agree on pinned, loaded artifacts, the
 * body is copied, rendered and tokenized by the {@link PromptEncoder} (off the event loop) and block-hashed for
 * each of the model's block sizes; the picker then sees the prompt's {@link PromptBlocks}, and with
 * {@code send_token_data} the plan's body carries the token IDs as {@code nvext.token_data}. Every other request
 * (KV off, model not ready, a fallback of the encoder) takes the load-only shim plan, answered at once.
 */
public final class KvDispatchHook implements DispatchHook {
    private static final Logger log = LoggerFactory.getLogger(KvDispatchHook.class);

    private final ShimDispatcher shim;
    private final Supplier<DynamoSnapshot> snapshots;
    private final Supplier<ShimConfig> shimConfig;
    private final Supplier<KvConfig> kvConfig;
    private final ModelArtifactResolver resolver;
    private final PromptEncoder encoder;
    private final KvPromptMetrics metrics;

    public KvDispatchHook(ShimDispatcher shim, Supplier<DynamoSnapshot> snapshots, Supplier<ShimConfig> shimConfig,
            Supplier<KvConfig> kvConfig, ModelArtifactResolver resolver, PromptEncoder encoder,
            KvPromptMetrics metrics) {
        this.shim = Objects.requireNonNull(shim, "shim");
        this.snapshots = snapshots;
        this.shimConfig = shimConfig;
        this.kvConfig = kvConfig;
        this.resolver = resolver;
        this.encoder = encoder;
        this.metrics = metrics;
    }

    @Override
    public @Nullable Answer plan(DispatchRequest request) {
        KvConfig kv = kvConfig.get();
        if (!kv.enabled() || !request.chatBody()) {
            return shim.plan(request); // a passthrough (not a chat body) is pinned by model alone
        }
        ModelArtifacts m = resolver.resolve(snapshots.get(), kv, shimConfig.get().workerModel(request.model()));
        if (!(m instanceof ModelArtifacts.Ready ready)) {
            ModelArtifacts.Why why = ((ModelArtifacts.Unavailable) m).why();
            metrics.unavailable(why);
            return shim.plan(request, null, why == ModelArtifacts.Why.ARTIFACT_UNPINNED
                    ? KvSelectionResult.ARTIFACT_UNPINNED : KvSelectionResult.TOKENIZER_UNAVAILABLE);
        }
        // The request's body is borrowed for this call only: the encoder and the plan get a copy, rewritten as the
        // first usable shim replica will receive it (global_prompts), since that is the prompt its worker computes.
        // The replicas' rewrites are read here, on the request's loop; the plan is made on the encoder's thread.
        Map<String, ChatRewrite> replicas = replicaRewrites(request);
        ChatRewrite rewrite = replicas.isEmpty() ? ChatRewrite.NONE : replicas.values().iterator().next();
        byte[] body = ByteBufUtil.getBytes(request.body());
        try {
            byte[] rewritten = rewrite.apply(body);
            body = rewritten == null ? body : rewritten;
        } catch (IOException e) {
            metrics.count(PromptResult.RENDER_UNAVAILABLE); // admission parsed it already: not expected
            return shim.plan(request);
        }
        byte[] shimBody = body;
        DispatchRequest copy = request.withBody(Unpooled.wrappedBuffer(shimBody));
        return new Later(encoder.encode(ready.artifacts(), shimBody)
                .thenApply(encoding -> planEncoded(copy, shimBody, encoding, ready, kv, rewrite, replicas)));
    }

    /** The rewrite of each usable backend that is a shim replica, in the request's candidate order. */
    private Map<String, ChatRewrite> replicaRewrites(DispatchRequest request) {
        ShimConfig shim = shimConfig.get();
        List<String> namespaces = snapshots.get().namespaces();
        Map<String, ChatRewrite> out = new LinkedHashMap<>();
        for (String b : request.usableBackends()) {
            if (shim.namespaceOf(b, namespaces) != null) {
                out.put(b, request.rewrites().forBackend(b));
            }
        }
        return out;
    }

    /** The picker's label for an encoder fallback (the same vocabulary, one enum per module). */
    static KvSelectionResult selectionResult(PromptEncoding.Reason reason) {
        return switch (reason) {
            case TOKENIZER_UNAVAILABLE -> KvSelectionResult.TOKENIZER_UNAVAILABLE;
            case PROMPT_TOO_LARGE -> KvSelectionResult.PROMPT_TOO_LARGE;
            case RENDER_UNAVAILABLE -> KvSelectionResult.RENDER_UNAVAILABLE;
        };
    }

    /** Runs where the encoding completed (the encoder's pool), never on an event loop. */
    private @Nullable DispatchPlan planEncoded(DispatchRequest request, byte[] body, PromptEncoding encoding,
            ModelArtifacts.Ready ready, KvConfig kv, ChatRewrite rendered, Map<String, ChatRewrite> replicas) {
        if (!(encoding instanceof PromptEncoding.Tokens tokens)) {
            PromptEncoding.Reason reason = ((PromptEncoding.Fallback) encoding).reason();
            metrics.fallback(reason);
            return shim.plan(request, null, selectionResult(reason));
        }
        ObjectNode root;
        try {
            root = TokenDataBody.parse(body);
        } catch (IOException e) {
            root = null;
        }
        if (root == null) {
            // Admission parsed it already; not expected, but never fatal.
            metrics.count(PromptResult.RENDER_UNAVAILABLE);
            return shim.plan(request, null, KvSelectionResult.RENDER_UNAVAILABLE);
        }
        int[] ids = tokens.ids();
        BlockHasher hasher = BlockHasher.of(ready.loraName(), TokenDataBody.cacheSalt(root, request.tenantId()));
        List<BlockHashes> hashes = new ArrayList<>(ready.blockSizeCount());
        for (int i = 0; i < ready.blockSizeCount(); i++) {
            int size = ready.blockSize(i);
            hashes.add(new BlockHashes(size, hasher.blockHashes(ids, size)));
        }
        metrics.count(PromptResult.ENCODED);
        DispatchPlan plan = shim.plan(request, new PromptBlocks(ids.length, hashes));
        if (plan == null || !kv.sendTokenData() || !sameRewrite(plan, replicas, rendered)) {
            return plan;
        }
        try {
            return plan.withPinnedBody(TokenDataBody.with(root, ids));
        } catch (IOException | RuntimeException e) {
            log.warn("nvext.token_data not attached: {}", LogSafe.escape(e));
            return plan;
        }
    }

    /**
     * Whether every backend of the plan receives the body that was rendered: the pinned body replaces each replica's
     * own rewrite, so replicas that need different rewrites get no {@code token_data} (their rewrites then apply).
     */
    private static boolean sameRewrite(DispatchPlan plan, Map<String, ChatRewrite> replicas, ChatRewrite rendered) {
        for (String b : plan.backends()) {
            if (!rendered.equals(replicas.get(b))) {
                return false;
            }
        }
        return true;
    }
}
