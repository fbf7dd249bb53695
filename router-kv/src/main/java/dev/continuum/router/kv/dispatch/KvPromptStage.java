package dev.continuum.router.kv.dispatch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.kv.artifacts.ModelArtifactResolver;
import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHashCache;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.PromptBlocks;
import dev.continuum.router.shim.PromptFallback;
import dev.continuum.router.shim.PromptOutcome;
import dev.continuum.router.shim.PromptStage;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The KV prompt pipeline as the shim dispatcher's {@link PromptStage}: for a model whose workers agree on pinned,
 * loaded artifacts, the body is copied, rewritten as the first usable shim replica receives it, rendered and
 * tokenized by the {@link PromptEncoder} (off the event loop) and block-hashed for each of the model's block sizes;
 * with {@code send_token_data} the answer also offers the body with the token IDs as {@code nvext.token_data}. A
 * model that is not ready answers its {@link PromptFallback} at once. Each outcome is counted in
 * {@code continuum_dynamo_kv_prompts_total}.
 *
 * <p>Installed by {@link KvRouting} only while {@code dynamo.kv.enabled}; it reads the rest of {@code dynamo.kv}
 * (pins, {@code send_token_data}) once per request from the generation that owner holds.
 */
public final class KvPromptStage implements PromptStage {
    private final Supplier<DynamoSnapshot> snapshots;
    private final Supplier<KvConfig> kvConfig;
    private final ModelArtifactResolver resolver;
    private final PromptEncoder encoder;
    private final KvPromptMetrics metrics;
    private final BlockHashCache blockHashes;

    KvPromptStage(Supplier<DynamoSnapshot> snapshots, Supplier<KvConfig> kvConfig, ModelArtifactResolver resolver,
            PromptEncoder encoder, KvPromptMetrics metrics) {
        this(snapshots, kvConfig, resolver, encoder, metrics, new BlockHashCache(0, BlockHashCache.Listener.NONE,
                BlockHashCache.Stats.NONE));
    }

    KvPromptStage(Supplier<DynamoSnapshot> snapshots, Supplier<KvConfig> kvConfig, ModelArtifactResolver resolver,
            PromptEncoder encoder, KvPromptMetrics metrics, BlockHashCache blockHashes) {
        this.snapshots = snapshots;
        this.kvConfig = kvConfig;
        this.resolver = resolver;
        this.encoder = encoder;
        this.metrics = metrics;
        this.blockHashes = blockHashes;
    }

    @Override
    public Answer prepare(DispatchRequest request, String workerModel, FirstReplica replica) {
        KvConfig kv = kvConfig.get();
        ModelArtifacts m = resolver.resolve(snapshots.get(), kv, workerModel);
        if (!(m instanceof ModelArtifacts.Ready ready)) {
            ModelArtifacts.Why why = ((ModelArtifacts.Unavailable) m).why();
            metrics.unavailable(why);
            return why == ModelArtifacts.Why.ARTIFACT_UNPINNED
                    ? PromptFallback.ARTIFACT_UNPINNED : PromptFallback.TOKENIZER_UNAVAILABLE;
        }
        // The request's body is borrowed for this call only: the encoder and the token-data body get a copy,
        // rewritten as the first usable shim replica will receive it (global_prompts), since that is the prompt its
        // worker computes.
        byte[] body = ByteBufUtil.getBytes(request.body());
        try {
            byte[] rewritten = replica.rewrite(request).apply(body);
            body = rewritten == null ? body : rewritten;
        } catch (IOException e) {
            metrics.count(PromptResult.RENDER_UNAVAILABLE); // admission parsed it already: not expected
            return PromptFallback.UNLABELLED;
        }
        byte[] shimBody = body;
        String tenantId = request.tenantId();
        return new Pending(encoder.encode(ready.artifacts(), shimBody)
                .thenApply(encoding -> blocks(shimBody, tenantId, encoding, ready, kv)));
    }

    /** The picker's label for an encoder fallback (the same vocabulary, one enum per module). */
    static PromptFallback fallback(PromptEncoding.Reason reason) {
        return switch (reason) {
            case TOKENIZER_UNAVAILABLE -> PromptFallback.TOKENIZER_UNAVAILABLE;
            case PROMPT_TOO_LARGE -> PromptFallback.PROMPT_TOO_LARGE;
            case RENDER_UNAVAILABLE -> PromptFallback.RENDER_UNAVAILABLE;
        };
    }

    /** Runs where the encoding completed (the encoder's pool), never on an event loop. */
    private PromptOutcome blocks(byte[] body, @Nullable String tenantId, PromptEncoding encoding,
            ModelArtifacts.Ready ready, KvConfig kv) {
        if (!(encoding instanceof PromptEncoding.Tokens tokens)) {
            PromptEncoding.Reason reason = ((PromptEncoding.Fallback) encoding).reason();
            metrics.fallback(reason);
            return fallback(reason);
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
            return PromptFallback.RENDER_UNAVAILABLE;
        }
        int[] ids = tokens.ids();
        BlockHasher hasher = BlockHasher.of(ready.loraName(), TokenDataBody.cacheSalt(root, tenantId));
        List<BlockHashes> hashes = new ArrayList<>(ready.blockSizeCount());
        for (int i = 0; i < ready.blockSizeCount(); i++) {
            int size = ready.blockSize(i);
            hashes.add(new BlockHashes(size, blockHashes.blockHashes(hasher, ids, size, tokens.prefix())));
        }
        metrics.count(PromptResult.ENCODED);
        ObjectNode parsed = root;
        return new PromptBlocks(ids.length, hashes, kv.sendTokenData() ? () -> TokenDataBody.with(parsed, ids) : null);
    }
}
