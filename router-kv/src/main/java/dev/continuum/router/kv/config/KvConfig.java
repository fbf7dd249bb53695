package dev.continuum.router.kv.config;

import dev.continuum.router.shim.KvPickerSettings;
import java.nio.file.Path;
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
 * @param segmentCacheBytes  the bound of the prompt token-ID segment cache shared by all models; 0 turns it off
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
        long segmentCacheBytes) {

    public static final int MAX_PINNED_ARTIFACTS = 1024;
    public static final double MAX_SCALE = 1_000_000;
    public static final double MAX_TEMPERATURE = 100;
    public static final String CHECKSUM_PREFIX = "blake3:";
    /** The cache directory when {@code artifact_cache_dir} is unset, under {@code java.io.tmpdir}. */
    public static final String DEFAULT_CACHE_DIR_NAME = "continuum-router-artifacts";

    /** {@code segment_cache_bytes}: default 64 MiB, at most 16 GiB. */
    public static final long DEFAULT_SEGMENT_CACHE_BYTES = 64L << 20;
    public static final long MAX_SEGMENT_CACHE_BYTES = 16L << 30;

    public static final KvConfig DEFAULTS = new KvConfig(false, true, false, List.of(), null, false, 1.0, 1.0, 0.0,
            ConditionalDisaggregation.DEFAULTS, DEFAULT_SEGMENT_CACHE_BYTES);

    public KvConfig {
        pinnedArtifacts = List.copyOf(pinnedArtifacts);
        Objects.requireNonNull(conditionalDisaggregation, "conditionalDisaggregation");
        if (segmentCacheBytes < 0 || segmentCacheBytes > MAX_SEGMENT_CACHE_BYTES) {
            throw new IllegalArgumentException("segmentCacheBytes " + segmentCacheBytes);
        }
    }

    /** The prompt caches at their defaults (callers that predate them). */
    public KvConfig(boolean enabled, boolean allowHttpArtifacts, boolean allowHfArtifacts, List<String> pinnedArtifacts,
            @Nullable String artifactCacheDir, boolean sendTokenData, double overlapScoreCredit,
            double prefillLoadScale, double routerTemperature, ConditionalDisaggregation conditionalDisaggregation) {
        this(enabled, allowHttpArtifacts, allowHfArtifacts, pinnedArtifacts, artifactCacheDir, sendTokenData,
                overlapScoreCredit, prefillLoadScale, routerTemperature, conditionalDisaggregation,
                DEFAULT_SEGMENT_CACHE_BYTES);
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
