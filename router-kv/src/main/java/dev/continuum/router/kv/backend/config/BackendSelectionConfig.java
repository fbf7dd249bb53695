package dev.continuum.router.kv.backend.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.kv_cache_index.selection}: whether the backend KV cache index steers {@code backends[]} selection, and
 * for which models (docs/kv-routing.md, "Use in selection"). A plain backend has no model card, so each model names
 * its tokenizer here, with the checksum {@code dynamo.kv.pinned_artifacts} must pin, as a card would.
 *
 * @param enabled whether requests for the listed models are scored by cached prefix and load
 * @param models  the models whose prompts are rendered and tokenized, at most {@link #MAX_MODELS}
 */
public record BackendSelectionConfig(boolean enabled,
                                     @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Model> models) {
    public static final int MAX_MODELS = 256;
    /** vLLM's default {@code --block-size}. */
    public static final int DEFAULT_BLOCK_SIZE = 16;
    public static final BackendSelectionConfig DEFAULTS = new BackendSelectionConfig(true, List.of());

    public BackendSelectionConfig {
        models = List.copyOf(models);
    }

    /** The entry for {@code model}, or null. */
    public @Nullable Model model(String model) {
        for (Model m : models) {
            if (m.model().equals(model)) {
                return m;
            }
        }
        return null;
    }

    /**
     * One model served by plain backends.
     *
     * @param model           the request's {@code model}
     * @param tokenizer       its {@code tokenizer.json}
     * @param tokenizerConfig its {@code tokenizer_config.json} (the chat template), or null: the prompt is rendered
     *                        without a template of its own
     * @param blockSize       the engines' tokens per KV block ({@code --block-size})
     */
    public record Model(String model, Artifact tokenizer,
                        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Artifact tokenizerConfig, int blockSize) {
        public Model {
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(tokenizer, "tokenizer");
        }
    }

    /**
     * A file and its checksum.
     *
     * @param path   a path, {@code file://}, {@code http(s)://} or {@code hf://} location, as a card's
     * @param blake3 {@code blake3:} and 64 lowercase hex digits
     */
    public record Artifact(String path, String blake3) {
        public static final String PREFIX = "blake3:";

        /** The 64 hex digits. */
        public String hex() {
            return blake3.substring(PREFIX.length());
        }
    }
}
