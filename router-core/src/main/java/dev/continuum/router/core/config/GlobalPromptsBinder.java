package dev.continuum.router.core.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Binds {@code global_prompts}, reading its prompt files (bounded, UTF-8) relative to {@code prompts_dir}, which
 * is itself relative to the config file's directory. Runs after {@code backends}, so a backend entry that names
 * no configured backend is reported.
 */
final class GlobalPromptsBinder {
    /** A prompt goes into every request it applies to; the KV renderer caps a whole prompt at 1 MiB anyway. */
    static final int MAX_PROMPT_BYTES = 1024 * 1024;
    static final String STRATEGY_EXPECTATION = "one of prepend, append, replace";

    private GlobalPromptsBinder() {
    }

    /** Null when the section is absent (it is then left out of the readback). */
    static @Nullable GlobalPromptsConfig bind(ConfigNode n, List<BackendConfig> backends, BindContext ctx) {
        if (!n.isPresent()) {
            return null;
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with default, default_file, backends, models, merge_strategy, separator");
            return null;
        }
        Path promptsDir = directory(n.get("prompts_dir"), ctx.baseDir);
        Path base = promptsDir != null ? promptsDir : ctx.baseDir;
        String inline = n.get("default").asStringOrNull();
        ConfigNode defaultFileNode = n.get("default_file");
        Path defaultFile = file(defaultFileNode, base);
        String defaultText = defaultFile != null ? read(defaultFileNode, defaultFile) : inline;
        Map<String, GlobalPromptsConfig.PromptSource> byBackend = entries(n.get("backends"), base);
        for (Map.Entry<String, GlobalPromptsConfig.PromptSource> e : byBackend.entrySet()) {
            if (backends.stream().noneMatch(b -> b.name().equals(e.getKey()))) {
                n.get("backends").get(e.getKey()).warning("names no backend in backends; it applies to none");
            }
        }
        Map<String, GlobalPromptsConfig.PromptSource> byModel = entries(n.get("models"), base);
        GlobalPromptsConfig.MergeStrategy strategy = n.get("merge_strategy").asChoice(
                GlobalPromptsConfig.MergeStrategy.PREPEND, GlobalPromptsBinder::strategy, STRATEGY_EXPECTATION);
        ConfigNode sepNode = n.get("separator");
        String separator = GlobalPromptsConfig.DEFAULT_SEPARATOR;
        if (sepNode.kind() == ConfigNode.Kind.SCALAR) {
            separator = sepNode.asString(separator);
        } else if (sepNode.isPresent()) {
            sepNode.invalid("a string");
        }
        if (defaultText == null && byBackend.isEmpty() && byModel.isEmpty()) {
            n.noEffect("no prompt is configured (default, default_file, backends or models); the section does nothing");
        }
        return new GlobalPromptsConfig(inline, defaultFile, promptsDir, byBackend, byModel, strategy, separator,
                defaultText);
    }

    private static Map<String, GlobalPromptsConfig.PromptSource> entries(ConfigNode map, Path base) {
        Map<String, GlobalPromptsConfig.PromptSource> out = new LinkedHashMap<>();
        if (!map.isPresent()) {
            return out;
        }
        if (map.kind() != ConfigNode.Kind.MAP) {
            map.invalid("a map of names to {prompt, prompt_file}");
            return out;
        }
        for (Map.Entry<String, ConfigNode> e : map.entries().entrySet()) {
            ConfigNode entry = e.getValue();
            if (entry.kind() != ConfigNode.Kind.MAP) {
                entry.invalid("a map with prompt or prompt_file");
                continue;
            }
            String prompt = entry.get("prompt").asStringOrNull();
            ConfigNode fileNode = entry.get("prompt_file");
            Path file = file(fileNode, base);
            String text = file != null ? read(fileNode, file) : prompt;
            if (prompt == null && !fileNode.isPresent()) {
                entry.invalid("a map with prompt or prompt_file");
                continue;
            }
            if (text != null) {
                out.put(e.getKey(), new GlobalPromptsConfig.PromptSource(prompt, file, text));
            }
        }
        return out;
    }

    private static @Nullable Path directory(ConfigNode node, Path baseDir) {
        Path dir = file(node, baseDir);
        if (dir != null && !Files.isDirectory(dir)) {
            node.invalid("a directory; " + (Files.exists(dir) ? "not a directory" : "not found"));
        }
        return dir;
    }

    private static @Nullable Path file(ConfigNode node, Path base) {
        String text = node.asPathString();
        if (text == null || text.isBlank()) {
            if (node.isPresent()) {
                node.invalid("a path");
            }
            return null;
        }
        try {
            Path p = Path.of(text.trim());
            return (p.isAbsolute() ? p : base.resolve(p)).normalize();
        } catch (InvalidPathException e) {
            node.invalid("a path");
            return null;
        }
    }

    /** The file's text, or null after reporting why it cannot be used (too large, unreadable, not UTF-8). */
    static @Nullable String read(ConfigNode node, Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_PROMPT_BYTES + 1);
        } catch (NoSuchFileException e) {
            node.invalid("a readable prompt file; not found");
            return null;
        } catch (IOException e) {
            node.invalid("a readable prompt file; " + e.getClass().getSimpleName());
            return null;
        }
        if (bytes.length > MAX_PROMPT_BYTES) {
            node.invalid("a prompt file of at most 1 MiB");
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            node.invalid("a UTF-8 prompt file");
            return null;
        }
    }

    private static GlobalPromptsConfig.@Nullable MergeStrategy strategy(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "prepend" -> GlobalPromptsConfig.MergeStrategy.PREPEND;
            case "append" -> GlobalPromptsConfig.MergeStrategy.APPEND;
            case "replace" -> GlobalPromptsConfig.MergeStrategy.REPLACE;
            default -> null;
        };
    }
}
