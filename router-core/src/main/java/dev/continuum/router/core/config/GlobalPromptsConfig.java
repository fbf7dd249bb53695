package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code global_prompts}: the system prompt the chat path merges into chat-completion bodies (docs/configuration.md).
 * The prompt of a request is the model's, else its backend's, else the default; at each level a file's text
 * beats the inline text. Files are read when the config is loaded (and again on every reload), so the record
 * holds their text: a changed file makes a reloaded config differ from the running one.
 *
 * @param defaultPrompt  {@code default}: the inline prompt for every request
 * @param defaultFile    {@code default_file}, resolved against {@code prompts_dir}
 * @param promptsDir     {@code prompts_dir}, resolved against the config file's directory (null: that directory)
 * @param backends       {@code backends.<backend name>}
 * @param models         {@code models.<model id>}
 * @param mergeStrategy  how the prompt meets the request's own system message
 * @param separator      text between the global prompt and the request's system prompt
 * @param defaultText    the default level's effective text ({@code default_file}'s, else {@code default}), or null
 */
@JsonPropertyOrder({"default", "default_file", "prompts_dir", "backends", "models", "merge_strategy", "separator"})
public record GlobalPromptsConfig(
        @JsonProperty("default") @Nullable String defaultPrompt,
        @Nullable Path defaultFile,
        @Nullable Path promptsDir,
        Map<String, PromptSource> backends,
        Map<String, PromptSource> models,
        MergeStrategy mergeStrategy,
        String separator,
        @JsonIgnore @Nullable String defaultText) {

    /** Between the global prompt and the request's own system prompt when {@code separator} is not written. */
    public static final String DEFAULT_SEPARATOR = "\n\n";

    public GlobalPromptsConfig {
        backends = Collections.unmodifiableMap(new LinkedHashMap<>(backends));
        models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
        Objects.requireNonNull(mergeStrategy, "mergeStrategy");
        Objects.requireNonNull(separator, "separator");
    }

    /**
     * The prompt for {@code model} sent to {@code backend}: model, then backend, then default; null when no
     * level has one. An empty text at a level is an answer too (that model or backend gets no prompt).
     */
    public @Nullable String promptFor(String model, String backend) {
        PromptSource m = models.get(model);
        if (m != null) {
            return m.text();
        }
        PromptSource b = backends.get(backend);
        if (b != null) {
            return b.text();
        }
        return defaultText;
    }

    /** The prompt files this config read (for the config watcher): a changed one reloads the config. */
    @JsonIgnore
    public List<Path> files() {
        List<Path> out = new java.util.ArrayList<>();
        if (defaultFile != null) {
            out.add(defaultFile);
        }
        for (PromptSource s : backends.values()) {
            if (s.promptFile() != null) {
                out.add(s.promptFile());
            }
        }
        for (PromptSource s : models.values()) {
            if (s.promptFile() != null) {
                out.add(s.promptFile());
            }
        }
        return out;
    }

    /**
     * One {@code backends.<name>} or {@code models.<id>} entry.
     *
     * @param prompt     the inline text as written
     * @param promptFile {@code prompt_file}, resolved against {@code prompts_dir}
     * @param text       the effective text: the file's when there is one, else {@code prompt}
     */
    public record PromptSource(@Nullable String prompt, @Nullable Path promptFile, @JsonIgnore String text) {
        public PromptSource {
            Objects.requireNonNull(text, "text");
        }
    }

    /** How the global prompt meets the request's own system prompt. */
    public enum MergeStrategy {
        /** The global prompt, the separator, then the request's system prompt. */
        PREPEND,
        /** The request's system prompt, the separator, then the global prompt. */
        APPEND,
        /** The global prompt alone: the request's system messages are dropped. */
        REPLACE
    }
}
