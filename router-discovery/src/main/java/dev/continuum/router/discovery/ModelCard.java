package dev.continuum.router.discovery;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The typed subset of a worker's model deployment card. Every field is optional: Dynamo's N-2 wire window
 * means a field may be absent, renamed or of a different type, and a field that does not parse is dropped
 * alone (null here) without touching the others.
 *
 * @param model               {@code display_name}, else {@code name}
 * @param workerType          the card's {@code worker_type} as written (for diagnostics; roles are resolved)
 * @param prefillFlag         whether {@code model_type} carries the {@code Prefill} flag
 * @param kvCacheBlockSize    tokens per KV block ({@code kv_cache_block_size})
 * @param capacity            what the worker can hold (from {@code runtime_config}, and the top-level
 *                            {@code context_length})
 * @param dataParallelStartRank {@code runtime_config.data_parallel_start_rank}
 * @param dataParallelSize    {@code runtime_config.data_parallel_size}; non-null means the card declares
 *                            data parallelism and rank headers are sent
 * @param disaggregatedEndpoint {@code runtime_config.disaggregated_endpoint}
 * @param artifacts           tokenizer and prompt-template files with their blake3 checksums (for KV routing)
 * @param release             the card's release string, if any ({@code dynamo_version}, {@code runtime_version},
 *                            {@code version} or {@code release})
 * @param rawCard             the card as the worker wrote it, byte for byte; null when it exceeded
 *                            {@code MAX_RETAINED_CARD_BYTES} (the typed subset is kept regardless)
 * @param loraName            {@code lora.name} of a LoRA adapter's card (it seeds the KV block hashes), or null
 */
public record ModelCard(
        @Nullable String model,
        @Nullable String workerType,
        boolean prefillFlag,
        @Nullable Integer kvCacheBlockSize,
        WorkerCapacity capacity,
        @Nullable Integer dataParallelStartRank,
        @Nullable Integer dataParallelSize,
        @Nullable DisaggregatedEndpoint disaggregatedEndpoint,
        CardArtifacts artifacts,
        @Nullable String release,
        @Nullable String rawCard,
        @Nullable String loraName) {

    public ModelCard {
        Objects.requireNonNull(capacity, "capacity");
        Objects.requireNonNull(artifacts, "artifacts");
    }

    /** The card of a base model (no LoRA adapter). */
    public ModelCard(@Nullable String model, @Nullable String workerType, boolean prefillFlag,
            @Nullable Integer kvCacheBlockSize, WorkerCapacity capacity, @Nullable Integer dataParallelStartRank,
            @Nullable Integer dataParallelSize, @Nullable DisaggregatedEndpoint disaggregatedEndpoint,
            CardArtifacts artifacts, @Nullable String release, @Nullable String rawCard) {
        this(model, workerType, prefillFlag, kvCacheBlockSize, capacity, dataParallelStartRank, dataParallelSize,
                disaggregatedEndpoint, artifacts, release, rawCard, null);
    }

    /** Capacities a worker advertises; each is null when the card does not say. */
    public record WorkerCapacity(
            @Nullable Long totalKvBlocks,
            @Nullable Long maxNumBatchedTokens,
            @Nullable Long maxNumSeqs,
            @Nullable Long contextLength) {
        public static final WorkerCapacity UNKNOWN = new WorkerCapacity(null, null, null, null);
    }

    /**
     * {@code runtime_config.disaggregated_endpoint}: older cards write a path string
     * ({@code dynamo/prefill/generate}), newer ones an object with the bootstrap host and port.
     */
    public record DisaggregatedEndpoint(
            @Nullable String path, @Nullable String bootstrapHost, @Nullable Integer bootstrapPort) {
    }

    /** The card's pinned artifacts; the KV issue fetches and verifies them. */
    public record CardArtifacts(
            @Nullable ArtifactFile tokenizer,
            @Nullable ArtifactFile promptFormatter,
            @Nullable ArtifactFile chatTemplateFile) {
        public static final CardArtifacts NONE = new CardArtifacts(null, null, null);
    }

    /**
     * One checked file of the card.
     *
     * @param kind       the variant name ({@code hf_tokenizer_json}, {@code hf_chat_template}, ...)
     * @param path       local path or URL as written
     * @param blake3Hex  the 64-hex-digit BLAKE3 of the file, or null when the checksum is absent or not blake3
     * @param custom     {@code is_custom} of a chat template variant (false otherwise)
     * @param size       the declared size in bytes, or null; refuses an oversized file early, never trusted
     *                   over the bytes read
     */
    public record ArtifactFile(String kind, String path, @Nullable String blake3Hex, boolean custom,
                               @Nullable Long size) {
        public ArtifactFile {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(path, "path");
        }

        /** A file whose card declares no size. */
        public ArtifactFile(String kind, String path, @Nullable String blake3Hex, boolean custom) {
            this(kind, path, blake3Hex, custom, null);
        }
    }
}
