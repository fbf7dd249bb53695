package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A model's chat templates and the special-token variables they see, read as transformers reads them: the
 * template from the chat-template file when the card has one (a bare Jinja file, or a {@code chat_template.json}
 * object), else {@code tokenizer_config.json}'s {@code chat_template}, either one string or a list of named
 * templates; {@code bos_token}, {@code eos_token} and the other special tokens in string or {@code AddedToken}
 * object form, passed to the template as strings.
 *
 * @param named         the templates by name; a single template is {@code default}
 * @param specialTokens the special-token variables (transformers' {@code special_tokens_map})
 */
record ChatTemplates(Map<String, String> named, Map<String, Object> specialTokens) {
    static final String DEFAULT = "default";
    static final String TOOL_USE = "tool_use";
    private static final List<String> TOKEN_KEYS =
            List.of("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token");

    /** An artifact that does not give a usable template. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /**
     * The template apply_chat_template picks: {@code tool_use} when the request passes tools (an empty list
     * too) and the model has one, else {@code default}.
     */
    Optional<String> select(boolean toolsGiven) {
        if (named.size() == 1 && named.containsKey(DEFAULT)) {
            return Optional.of(named.get(DEFAULT));
        }
        if (toolsGiven && named.containsKey(TOOL_USE)) {
            return Optional.of(named.get(TOOL_USE));
        }
        return Optional.ofNullable(named.get(DEFAULT));
    }

    static ChatTemplates read(ObjectMapper mapper, Optional<Path> tokenizerConfig, Optional<Path> templateFile,
                              int maxBytes) throws IOException, Invalid {
        JsonNode config = null;
        if (tokenizerConfig.isPresent()) {
            config = mapper.readTree(readBounded(tokenizerConfig.get(), maxBytes));
            if (!config.isObject()) {
                throw new Invalid("tokenizer_config.json is not a JSON object");
            }
        }
        Map<String, String> named = null;
        if (templateFile.isPresent()) {
            named = fromTemplateFile(mapper, readBounded(templateFile.get(), maxBytes));
        } else if (config != null && config.has("chat_template")) {
            named = templates(config.get("chat_template"), "tokenizer_config.json chat_template");
        }
        if (named == null || named.isEmpty()) {
            throw new Invalid("no chat template in the model's artifacts");
        }
        return new ChatTemplates(Map.copyOf(named), config == null ? Map.of() : specialTokens(config));
    }

    private static Map<String, String> fromTemplateFile(ObjectMapper mapper, byte[] bytes) throws Invalid {
        String text = new String(bytes, StandardCharsets.UTF_8);
        // chat_template.json holds {"chat_template": ...}; a .jinja file is the template itself.
        if (text.stripLeading().startsWith("{")) {
            try {
                JsonNode node = mapper.readTree(text);
                if (node.isObject() && node.has("chat_template")) {
                    return templates(node.get("chat_template"), "chat_template.json chat_template");
                }
            } catch (IOException notJson) {
                // a Jinja template that happens to start like JSON: use it as the template
            }
        }
        return Map.of(DEFAULT, text);
    }

    private static Map<String, String> templates(JsonNode node, String where) throws Invalid {
        if (node.isTextual()) {
            return Map.of(DEFAULT, node.asText());
        }
        if (!node.isArray()) {
            throw new Invalid(where + " is neither a string nor a list of named templates");
        }
        Map<String, String> named = new LinkedHashMap<>();
        for (JsonNode entry : node) {
            JsonNode name = entry.get("name");
            JsonNode template = entry.get("template");
            if (name == null || !name.isTextual() || template == null || !template.isTextual()) {
                throw new Invalid(where + ": an entry without a string name and template");
            }
            named.put(name.asText(), template.asText());
        }
        return named;
    }

    private static Map<String, Object> specialTokens(JsonNode config) {
        Map<String, Object> tokens = new LinkedHashMap<>();
        for (String key : TOKEN_KEYS) {
            String value = tokenString(config.get(key));
            if (value != null) {
                tokens.put(key, value);
            }
        }
        JsonNode additional = config.get("additional_special_tokens");
        if (additional != null && additional.isArray()) {
            List<String> list = new ArrayList<>();
            for (JsonNode t : additional) {
                String value = tokenString(t);
                if (value != null) {
                    list.add(value);
                }
            }
            tokens.put("additional_special_tokens", List.copyOf(list));
        }
        return Map.copyOf(tokens);
    }

    /** A special token as a string: the plain form, or an AddedToken object's {@code content}. */
    private static @Nullable String tokenString(@Nullable JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isTextual()) {
            return node.asText();
        }
        JsonNode content = node.get("content");
        return content != null && content.isTextual() ? content.asText() : null;
    }

    /** Reads a file of at most {@code maxBytes}, refusing a larger one before reading past the bound. */
    static byte[] readBounded(Path file, int maxBytes) throws IOException {
        long size = Files.size(file);
        if (size > maxBytes) {
            throw new IOException(file.getFileName() + ": " + size + " bytes (at most " + maxBytes + ")");
        }
        try (var in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw new IOException(file.getFileName() + ": more than " + maxBytes + " bytes");
            }
            return bytes;
        }
    }
}
