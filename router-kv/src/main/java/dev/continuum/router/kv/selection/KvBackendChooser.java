package dev.continuum.router.kv.selection;

import dev.continuum.router.discovery.ModelCard.ArtifactFile;
import dev.continuum.router.kv.artifacts.ArtifactStore;
import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.backend.config.BackendSelectionConfig;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHashCache;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.PromptArtifacts;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.proxy.BackendChooser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The proxy's {@link BackendChooser} for plain backends: for a model listed in
 * {@code dynamo.kv_cache_index.selection.models} whose candidates include a backend with a source, the body is
 * copied, rendered and tokenized by the KV prompt pipeline's encoder with the model's pinned files (fetched, verified
 * and cached by the same {@link ArtifactStore}, under the same {@code dynamo.kv.pinned_artifacts}), off the event
 * loop; its block hashes come from the pipeline's {@link BlockHashCache} (a conversation's earlier turns' blocks are
 * not hashed again, and a Dynamo model at the same block size shares the entries), and the prompt's chained
 * hashes ({@link #promptKeys}) then go to {@link BackendKvScorer} at each pick. Anything else answers
 * null at once and the strategy picks, counted by {@link SelectionResult}. Both sections are read per request, so a
 * reload applies to requests that start afterwards.
 */
public final class KvBackendChooser implements BackendChooser {
    private final Supplier<KvCacheIndexConfig> index;
    private final Supplier<KvConfig> kv;
    private final ArtifactStore store;
    private final PromptEncoder encoder;
    private final BackendKvScorer scorer;
    private final SelectionMetrics metrics;
    private final BlockHashCache blockHashes;
    private volatile Sourced sourced = new Sourced(KvCacheIndexConfig.DEFAULTS, Set.of());

    /** The backends with a source, per config generation. */
    private record Sourced(KvCacheIndexConfig config, Set<String> backends) {
    }

    public KvBackendChooser(Supplier<KvCacheIndexConfig> index, Supplier<KvConfig> kv, ArtifactStore store,
            PromptEncoder encoder, BackendKvScorer scorer, SelectionMetrics metrics, BlockHashCache blockHashes) {
        this.index = index;
        this.kv = kv;
        this.store = store;
        this.encoder = encoder;
        this.scorer = scorer;
        this.metrics = metrics;
        this.blockHashes = blockHashes;
    }

    @Override
    public @Nullable CompletionStage<@Nullable Choice> prepare(String model, ByteBuf body,
            List<? extends Candidate> candidates) {
        KvCacheIndexConfig config = index.get();
        BackendSelectionConfig selection = config.selection();
        if (!selection.enabled() || config.sources().isEmpty()) {
            return null; // the index steers nothing: not a fallback
        }
        BackendSelectionConfig.Model m = selection.model(model);
        if (m == null) {
            metrics.count(SelectionResult.NO_MODEL);
            return null;
        }
        Set<String> backends = sourced(config);
        if (!anySourced(candidates, backends)) {
            metrics.count(SelectionResult.NO_SOURCE);
            return null;
        }
        KvConfig k = kv.get();
        Object artifacts = artifacts(m, k);
        if (artifacts instanceof SelectionResult why) {
            metrics.count(why);
            return null;
        }
        byte[] copy = ByteBufUtil.getBytes(body); // borrowed for this call only
        double credit = k.overlapScoreCredit();
        double scale = k.prefillLoadScale();
        CompletableFuture<PromptEncoding> encoded = encoder.encode((PromptArtifacts) artifacts, copy);
        return encoded.thenApply(encoding -> choice(encoding, m.blockSize(), credit, scale));
    }

    /** Runs where the encoding completed (the encoder's pool). */
    private @Nullable Choice choice(PromptEncoding encoding, int blockSize, double credit, double scale) {
        if (!(encoding instanceof PromptEncoding.Tokens tokens)) {
            metrics.count(switch (((PromptEncoding.Fallback) encoding).reason()) {
                case TOKENIZER_UNAVAILABLE -> SelectionResult.TOKENIZER_UNAVAILABLE;
                case PROMPT_TOO_LARGE -> SelectionResult.PROMPT_TOO_LARGE;
                case RENDER_UNAVAILABLE -> SelectionResult.RENDER_UNAVAILABLE;
            });
            return null;
        }
        long[] blocks = blockHashes.blockHashes(BlockHasher.unsalted(), tokens.ids(), blockSize, tokens.prefix());
        return new KvChoice(scorer, metrics, promptKeys(blocks), credit, scale);
    }

    /**
     * A prompt's keys in the {@link BackendKvIndex}: its blocks' chained hashes (the router's names for engine
     * blocks, docs/kv-routing.md "One block identity"), computed and boxed in one pass, once per request off the event
     * loop, so that the walks at each pick allocate nothing.
     */
    public static Long[] promptKeys(long[] blockHashes) {
        Long[] keys = new Long[blockHashes.length];
        long chained = 0;
        for (int i = 0; i < keys.length; i++) {
            chained = i == 0 ? blockHashes[0] : BlockHasher.chain(chained, blockHashes[i]);
            keys[i] = chained;
        }
        return keys;
    }

    /** The model's prompt artifacts when pinned and loaded, else why not (a fetch is queued when one is due). */
    private Object artifacts(BackendSelectionConfig.Model m, KvConfig k) {
        Set<String> pins = k.pinnedHex();
        BackendSelectionConfig.Artifact tok = m.tokenizer();
        BackendSelectionConfig.Artifact cfg = m.tokenizerConfig();
        if (!pins.contains(tok.hex()) || (cfg != null && !pins.contains(cfg.hex()))) {
            return SelectionResult.ARTIFACT_UNPINNED;
        }
        ArtifactStore.Options options = new ArtifactStore.Options(k.allowHttpArtifacts(), k.allowHfArtifacts());
        Path tokenizer = store.request(new ArtifactFile("hf_tokenizer_json", tok.path(), tok.hex(), false), options);
        Path config = cfg == null ? null
                : store.request(new ArtifactFile("hf_tokenizer_config_json", cfg.path(), cfg.hex(), false), options);
        if (tokenizer == null || (cfg != null && config == null)) {
            return SelectionResult.TOKENIZER_UNAVAILABLE;
        }
        // The key names the loaded model in the encoder's caches, as the card-based key does.
        String key = tok.hex() + "+" + (cfg == null ? "" : cfg.hex()) + "+";
        return new PromptArtifacts(key, tokenizer, Optional.ofNullable(config), Optional.empty());
    }

    private Set<String> sourced(KvCacheIndexConfig config) {
        Sourced s = sourced;
        if (s.config() != config) {
            Set<String> names = new HashSet<>();
            for (KvCacheIndexConfig.Source source : config.sources()) {
                names.add(source.backend());
            }
            s = new Sourced(config, Set.copyOf(names));
            sourced = s;
        }
        return s.backends();
    }

    private static boolean anySourced(List<? extends Candidate> candidates, Set<String> backends) {
        for (Candidate c : candidates) {
            if (backends.contains(c.name())) {
                return true;
            }
        }
        return false;
    }
}
