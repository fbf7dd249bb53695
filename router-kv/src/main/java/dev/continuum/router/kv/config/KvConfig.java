package dev.continuum.router.kv.config;

import dev.continuum.router.shim.KvPickerSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.kv}.
 *
 * @param enabled            whether requests to a model with pinned artifacts are encoded (tokens, block hashes)
 * @param allowHttpArtifacts whether {@code http(s)://} card paths are fetched (a worker's own metadata URL)
 * @param allowHfArtifacts   whether {@code hf://} card paths are fetched from the Hugging Face Hub
 * @param pinnedArtifacts    the {@code blake3:<64 lowercase hex>} checksums the router may fetch, cache and load
 * @param artifactCacheDir   where verified artifacts are kept ({@code <dir>/blobs/<checksum>}); null: under
 *                           {@code java.io.tmpdir}
 * @param sendTokenData      whether the rendered token IDs go on the shim body as {@code nvext.token_data}
 * @param overlapScoreCredit blocks of credit per overlapping block (the KV-aware picker's formula)
 * @param prefillLoadScale   weight of the prefill term (the KV-aware picker's formula)
 * @param routerTemperature  0 picks the lowest cost, above 0 samples by softmax
 * @param conditionalDisaggregation whether a decode worker may prefill a mostly cached request itself
 * @param mode               where the KV index's blocks come from per namespace: kv-events, the router's own picks,
 *                           or whichever the namespace offers
 * @param predictedTtl       how long a picked rank counts as holding the request's blocks before kv-events confirm
 *                           them (zero: no prediction where kv-events run)
 * @param approximateTtl     how long a picked rank counts as holding the request's blocks in approximate mode
 * @param segmentCacheBytes  the bound of the prompt token-ID segment cache shared by all models; 0 turns it off
 * @param renderCacheBytes   the bound of the rendered-prefix cache (render once) shared by all models; 0 turns it off
 * @param blockHashCacheBytes the bound of the block-hash cache of conversation prefixes; 0 turns it off
 */
public record KvConfig(
        boolean enabled,
        boolean allowHttpArtifacts,
        boolean allowHfArtifacts,
        List<String> pinnedArtifacts,
        @Nullable String artifactCacheDir,
        boolean sendTokenData,
        double overlapScoreCredit,
        double prefillLoadScale,
        double routerTemperature,
        ConditionalDisaggregation conditionalDisaggregation,
        Mode mode,
        Duration predictedTtl,
        Duration approximateTtl,
        long segmentCacheBytes,
        long renderCacheBytes,
        long blockHashCacheBytes) {

    public static final int MAX_PINNED_ARTIFACTS = 1024;
    public static final double MAX_SCALE = 1_000_000;
    public static final double MAX_TEMPERATURE = 100;
    public static final String CHECKSUM_PREFIX = "blake3:";
    /** The cache directory when {@code artifact_cache_dir} is unset, under {@code java.io.tmpdir}. */
    public static final String DEFAULT_CACHE_DIR_NAME = "continuum-router-artifacts";

    /** Upstream's predict-on-route arms use 5 s (upstream leaves the flag unset, off, by default). */
    public static final Duration DEFAULT_PREDICTED_TTL = Duration.ofSeconds(5);
    /** Upstream's {@code --router-ttl-secs} default for routing without kv-events. */
    public static final Duration DEFAULT_APPROXIMATE_TTL = Duration.ofSeconds(120);
    public static final Duration MAX_TTL = Duration.ofHours(1);
    /**
     * {@code segment_cache_bytes}: 64 MiB of token IDs by segment and chunk, at most 16 GiB. A piece is cached the
     * second time it is seen, so a stream of unique prompts costs its keys and no cache work (docs/kv-prompt.md).
     */
    public static final long DEFAULT_SEGMENT_CACHE_BYTES = 64L << 20;
    public static final long MAX_SEGMENT_CACHE_BYTES = 16L << 30;
    /** {@code render_cache_bytes}: 64 MiB of rendered conversation prefixes (token IDs), at most 16 GiB. */
    public static final long DEFAULT_RENDER_CACHE_BYTES = 64L << 20;
    /** {@code block_hash_cache_bytes}: 16 MiB of block hashes by conversation prefix, at most 16 GiB. */
    public static final long DEFAULT_BLOCK_HASH_CACHE_BYTES = 16L << 20;

    public static final KvConfig DEFAULTS = new KvConfig(false, true, false, List.of(), null, false, 1.0, 1.0, 0.0,
            ConditionalDisaggregation.DEFAULTS);

    public KvConfig {
        pinnedArtifacts = List.copyOf(pinnedArtifacts);
        Objects.requireNonNull(conditionalDisaggregation, "conditionalDisaggregation");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(predictedTtl, "predictedTtl");
        Objects.requireNonNull(approximateTtl, "approximateTtl");
        if (segmentCacheBytes < 0 || segmentCacheBytes > MAX_SEGMENT_CACHE_BYTES) {
            throw new IllegalArgumentException("segmentCacheBytes " + segmentCacheBytes);
        }
        if (renderCacheBytes < 0 || renderCacheBytes > MAX_SEGMENT_CACHE_BYTES) {
            throw new IllegalArgumentException("renderCacheBytes " + renderCacheBytes);
        }
        if (blockHashCacheBytes < 0 || blockHashCacheBytes > MAX_SEGMENT_CACHE_BYTES) {
            throw new IllegalArgumentException("blockHashCacheBytes " + blockHashCacheBytes);
        }
    }

    /** With the default bounds of the render and block-hash caches. */
    public KvConfig(boolean enabled, boolean allowHttpArtifacts, boolean allowHfArtifacts, List<String> pinnedArtifacts,
            @Nullable String artifactCacheDir, boolean sendTokenData, double overlapScoreCredit,
            double prefillLoadScale, double routerTemperature, ConditionalDisaggregation conditionalDisaggregation,
            Mode mode, Duration predictedTtl, Duration approximateTtl, long segmentCacheBytes) {
        this(enabled, allowHttpArtifacts, allowHfArtifacts, pinnedArtifacts, artifactCacheDir, sendTokenData,
                overlapScoreCredit, prefillLoadScale, routerTemperature, conditionalDisaggregation, mode, predictedTtl,
                approximateTtl, segmentCacheBytes, DEFAULT_RENDER_CACHE_BYTES, DEFAULT_BLOCK_HASH_CACHE_BYTES);
    }

    /** With the defaults of {@code mode}, {@code predicted_ttl}, {@code approximate_ttl} and the prompt caches. */
    public KvConfig(boolean enabled, boolean allowHttpArtifacts, boolean allowHfArtifacts, List<String> pinnedArtifacts,
            @Nullable String artifactCacheDir, boolean sendTokenData, double overlapScoreCredit,
            double prefillLoadScale, double routerTemperature, ConditionalDisaggregation conditionalDisaggregation) {
        this(enabled, allowHttpArtifacts, allowHfArtifacts, pinnedArtifacts, artifactCacheDir, sendTokenData,
                overlapScoreCredit, prefillLoadScale, routerTemperature, conditionalDisaggregation, Mode.AUTO,
                DEFAULT_PREDICTED_TTL, DEFAULT_APPROXIMATE_TTL, DEFAULT_SEGMENT_CACHE_BYTES, DEFAULT_RENDER_CACHE_BYTES,
                DEFAULT_BLOCK_HASH_CACHE_BYTES);
    }

    /** {@code dynamo.kv.mode}. */
    public enum Mode {
        /** kv-events alone feed the index (with the predicted cache in front of them). */
        PRECISE("precise"),
        /** The router's own picks feed it, for every namespace. */
        APPROXIMATE("approximate"),
        /** Precise for a namespace with a kv-events publisher, approximate for one without. */
        AUTO("auto");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }

        public static @Nullable Mode parse(String text) {
            for (Mode m : values()) {
                if (m.label.equals(text)) {
                    return m;
                }
            }
            return null;
        }
    }

    /** The pinned checksums as 64 lowercase hex digits (without the {@code blake3:} prefix). */
    public Set<String> pinnedHex() {
        java.util.HashSet<String> hex = new java.util.HashSet<>(pinnedArtifacts.size() * 2);
        for (String p : pinnedArtifacts) {
            hex.add(p.substring(CHECKSUM_PREFIX.length()));
        }
        return Set.copyOf(hex);
    }

    /** The KV-aware picker's knobs. */
    public KvPickerSettings pickerSettings() {
        return new KvPickerSettings(overlapScoreCredit, prefillLoadScale, routerTemperature,
                conditionalDisaggregation.enabled(), conditionalDisaggregation.decodeBusyThreshold());
    }

    /** The cache directory, {@code artifact_cache_dir} or its default. */
    public Path cacheDir() {
        String dir = artifactCacheDir;
        return dir != null ? Path.of(dir) : Path.of(System.getProperty("java.io.tmpdir"), DEFAULT_CACHE_DIR_NAME);
    }

    /**
     * {@code dynamo.kv.conditional_disaggregation}.
     *
     * @param enabled             whether a decode worker may prefill a request itself
     * @param decodeBusyThreshold the share of {@code total_kv_blocks} a decode worker's projected active blocks
     *                            must stay at or below for such a bypass (0..1), or null for no such check
     */
    public record ConditionalDisaggregation(boolean enabled, @Nullable Double decodeBusyThreshold) {
        public static final ConditionalDisaggregation DEFAULTS = new ConditionalDisaggregation(false, null);
    }
}
