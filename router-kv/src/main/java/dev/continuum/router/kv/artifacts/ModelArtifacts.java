package dev.continuum.router.kv.artifacts;

import dev.continuum.router.kv.prompt.PromptArtifacts;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** What one model's workers allow the KV pipeline to do: encode with these artifacts, or not, and why. */
public sealed interface ModelArtifacts {

    /**
     * Every worker of the model agrees on one artifact key, and every artifact is pinned, verified and cached.
     *
     * @param artifacts  what the encoder reads
     * @param blockSizes the model's hashable {@code kv_cache_block_size} values (one or two, distinct)
     * @param loraName   the cards' {@code lora.name} (every worker of the model names the same), or null
     */
    record Ready(PromptArtifacts artifacts, int[] blockSizes, @Nullable String loraName) implements ModelArtifacts {
        public Ready {
            Objects.requireNonNull(artifacts, "artifacts");
            blockSizes = blockSizes.clone();
        }

        /** A base model's (no LoRA adapter). */
        public Ready(PromptArtifacts artifacts, int[] blockSizes) {
            this(artifacts, blockSizes, null);
        }

        @Override
        public int[] blockSizes() {
            return blockSizes.clone();
        }

        public int blockSize(int i) {
            return blockSizes[i];
        }

        public int blockSizeCount() {
            return blockSizes.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Ready r && r.artifacts.equals(artifacts)
                    && java.util.Arrays.equals(r.blockSizes, blockSizes) && Objects.equals(r.loraName, loraName);
        }

        @Override
        public int hashCode() {
            return (artifacts.hashCode() * 31 + java.util.Arrays.hashCode(blockSizes)) * 31 + Objects.hashCode(loraName);
        }

        @Override
        public String toString() {
            return "Ready[" + artifacts.key() + ", blockSizes=" + java.util.Arrays.toString(blockSizes)
                    + (loraName == null ? "" : ", lora") + "]";
        }
    }

    /** No encoding for this model now; {@code why} is its {@code result} label. */
    record Unavailable(Why why) implements ModelArtifacts {
    }

    /** Why a model is not encoded, as the selection results name it. */
    enum Why {
        /** A checksum the model's cards name is not pinned (or a card names none). */
        ARTIFACT_UNPINNED("artifact_unpinned"),
        /** Workers disagree, no worker has a usable tokenizer or block size, or loading is not finished. */
        TOKENIZER_UNAVAILABLE("tokenizer_unavailable");

        private final String label;

        Why(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    Unavailable UNPINNED = new Unavailable(Why.ARTIFACT_UNPINNED);
    Unavailable TOKENIZER_UNAVAILABLE = new Unavailable(Why.TOKENIZER_UNAVAILABLE);
}
