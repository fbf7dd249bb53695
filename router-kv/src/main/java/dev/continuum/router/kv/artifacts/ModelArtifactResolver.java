package dev.continuum.router.kv.artifacts;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.ModelCard.ArtifactFile;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.PromptArtifacts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-model decision: a model is encoded only when every worker serving it names the same artifact key (the
 * tokenizer's checksum and the template's) and each of those checksums is pinned and loaded. The decision is
 * cached per snapshot, config and store generation, so a request pays a map lookup; a new snapshot, a reload or
 * an artifact becoming ready recomputes it for the models asked about, and a model still waiting for its
 * artifacts is decided again at most once a second (which also asks the store for a fetch whose retry is due).
 *
 * <p>An unpinned checksum is counted ({@code result="unpinned"}) and logged once per model and checksum, for the
 * operator to review with {@code b3sum} and pin. A block size outside 16..65536, or a third distinct one, is
 * counted {@code result="unsupported"} and logged once per model and size.
 */
public final class ModelArtifactResolver {
    public static final int MAX_BLOCK_SIZES = 2;
    /** Bounds the once-per-model log memory (hostile fleets can name unbounded model names and checksums). */
    static final int MAX_REMEMBERED = 4096;

    private static final Logger log = LoggerFactory.getLogger(ModelArtifactResolver.class);

    /** How long a model waiting for its artifacts keeps its decision before asking the store again. */
    static final long RECHECK_NANOS = 1_000_000_000L;

    /** The decisions made for one snapshot, config and store generation. */
    private record Cached(DynamoSnapshot snapshot, KvConfig config, long store, Map<String, Decision> byModel) {
    }

    /** A decision, and until when it holds (forever, but for a model still waiting for its artifacts). */
    private record Decision(ModelArtifacts artifacts, long untilNanos) {
    }

    private final ArtifactStore store;
    private final ArtifactMetrics metrics;
    private final LongSupplier nanoClock;
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    private volatile @Nullable Cached cached;

    public ModelArtifactResolver(ArtifactStore store, ArtifactMetrics metrics, LongSupplier nanoClock) {
        this.store = store;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
    }

    /** The decision for {@code model} (the workers' {@code display_name}) in {@code snapshot}; never blocks. */
    public ModelArtifacts resolve(DynamoSnapshot snapshot, KvConfig config, String model) {
        long generation = store.generation();
        Cached c = cached;
        if (c == null || c.snapshot != snapshot || c.config != config || c.store != generation) {
            c = new Cached(snapshot, config, generation, new ConcurrentHashMap<>());
            cached = c;
        }
        Decision known = c.byModel.get(model);
        long now = nanoClock.getAsLong();
        if (known != null && now - known.untilNanos < 0) {
            return known.artifacts;
        }
        Waiting waiting = new Waiting();
        ModelArtifacts decided = decide(snapshot.fleet().workers(), config, model, waiting);
        if (c.byModel.size() < MAX_REMEMBERED || known != null) {
            // A model waiting for a fetch (or its 5-minute retry) asks the store again a second later; any
            // other decision holds until the snapshot, the config or the store changes.
            c.byModel.put(model, new Decision(decided, waiting.value ? now + RECHECK_NANOS : now + Long.MAX_VALUE / 2));
        }
        return decided;
    }

    /** Set when a decision depends on artifacts not loaded yet. */
    private static final class Waiting {
        boolean value;
    }

    private ModelArtifacts decide(List<DynamoWorker> workers, KvConfig config, String model, Waiting waiting) {
        String key = null;
        ModelCard.CardArtifacts artifacts = null;
        TreeSet<Integer> sizes = new TreeSet<>();
        String lora = null;
        boolean any = false;
        for (DynamoWorker w : workers) {
            ModelCard card = w.card();
            if (card == null || !model.equals(card.model())) {
                continue;
            }
            any = true;
            String k = key(card.artifacts());
            if (k == null) {
                return unpinnedOrUnavailable(model, card.artifacts());
            }
            // The LoRA name seeds the block hashes: workers that disagree on it cannot share one set of hashes.
            if (key != null && (!key.equals(k) || !Objects.equals(lora, card.loraName()))) {
                return ModelArtifacts.TOKENIZER_UNAVAILABLE;
            }
            key = k;
            lora = card.loraName();
            artifacts = card.artifacts();
            Integer size = card.kvCacheBlockSize();
            if (size != null) {
                sizes.add(size);
            }
        }
        if (!any || key == null || artifacts == null) {
            return ModelArtifacts.TOKENIZER_UNAVAILABLE;
        }
        // The config's pins, not the store's: a reload is decided on with the config it came with.
        Set<String> pins = config.pinnedHex();
        for (ArtifactFile f : files(artifacts)) {
            if (!pins.contains(Objects.requireNonNull(f.blake3Hex()))) {
                reportUnpinned(model, f);
                return ModelArtifacts.UNPINNED;
            }
        }
        int[] blockSizes = blockSizes(model, sizes);
        if (blockSizes.length == 0) {
            return ModelArtifacts.TOKENIZER_UNAVAILABLE;
        }
        ArtifactStore.Options options = new ArtifactStore.Options(config.allowHttpArtifacts(),
                config.allowHfArtifacts());
        Path[] paths = new Path[3];
        boolean ready = true;
        ArtifactFile[] slots = {artifacts.tokenizer(), artifacts.promptFormatter(), artifacts.chatTemplateFile()};
        for (int i = 0; i < slots.length; i++) {
            ArtifactFile f = slots[i];
            if (f != null) {
                paths[i] = store.request(f, options);
                ready &= paths[i] != null;
            }
        }
        if (!ready || paths[0] == null) {
            waiting.value = true;
            return ModelArtifacts.TOKENIZER_UNAVAILABLE;
        }
        return new ModelArtifacts.Ready(new PromptArtifacts(key, paths[0], Optional.ofNullable(paths[1]),
                Optional.ofNullable(paths[2])), blockSizes, lora);
    }

    /**
     * The artifact key: {@code tokenizer[+prompt_formatter][+chat_template_file]} checksums, or null when the
     * card's tokenizer is missing, is tiktoken (unsupported) or a file lacks a blake3 checksum.
     */
    static @Nullable String key(ModelCard.CardArtifacts a) {
        ArtifactFile t = a.tokenizer();
        if (t == null || !t.kind().equals("hf_tokenizer_json") || t.blake3Hex() == null) {
            return null;
        }
        StringBuilder key = new StringBuilder(t.blake3Hex());
        for (ArtifactFile f : new ArtifactFile[] {a.promptFormatter(), a.chatTemplateFile()}) {
            key.append('+');
            if (f != null) {
                if (f.blake3Hex() == null) {
                    return null;
                }
                key.append(f.blake3Hex());
            }
        }
        return key.toString();
    }

    private static List<ArtifactFile> files(ModelCard.CardArtifacts a) {
        List<ArtifactFile> files = new ArrayList<>(3);
        for (ArtifactFile f : new ArtifactFile[] {a.tokenizer(), a.promptFormatter(), a.chatTemplateFile()}) {
            if (f != null) {
                files.add(f);
            }
        }
        return files;
    }

    private ModelArtifacts unpinnedOrUnavailable(String model, ModelCard.CardArtifacts a) {
        ArtifactFile t = a.tokenizer();
        if (t != null && t.kind().equals("tik_token_model")) {
            once(model + "\0tiktoken", () -> {
                metrics.count(ArtifactResult.UNSUPPORTED);
                log.warn("kv model {}: a tiktoken tokenizer is not supported; requests score without a KV term",
                        LogSafe.escape(model));
            });
            return ModelArtifacts.TOKENIZER_UNAVAILABLE;
        }
        // A file without a blake3 checksum can never be pinned.
        return ModelArtifacts.UNPINNED;
    }

    private void reportUnpinned(String model, ArtifactFile f) {
        once(model + "\0" + f.blake3Hex(), () -> {
            metrics.count(ArtifactResult.UNPINNED);
            log.warn("kv model {}: artifact {} at {} has blake3:{}, which is not in dynamo.kv.pinned_artifacts; "
                    + "review the file (b3sum) and pin it to enable KV routing for the model", LogSafe.escape(model),
                    f.kind(), LogSafe.escape(f.path()), f.blake3Hex());
        });
    }

    private int[] blockSizes(String model, TreeSet<Integer> sizes) {
        List<Integer> ok = new ArrayList<>(MAX_BLOCK_SIZES);
        for (int size : sizes) {
            if (BlockHasher.supported(size) && ok.size() < MAX_BLOCK_SIZES) {
                ok.add(size);
            } else {
                once(model + "\0size" + size, () -> {
                    metrics.count(ArtifactResult.UNSUPPORTED);
                    log.warn("kv model {}: kv_cache_block_size {} is not hashed (16..65536, at most {} per model)",
                            LogSafe.escape(model), size, MAX_BLOCK_SIZES);
                });
            }
        }
        return ok.stream().mapToInt(Integer::intValue).toArray();
    }

    private void once(String what, Runnable report) {
        if (reported.size() < MAX_REMEMBERED && reported.add(what)) {
            report.run();
        }
    }
}
