package dev.continuum.router.kv.prompt;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * A word-level tokenizer.json of five words (loads in milliseconds) and a chat template of the test's choosing,
 * for tests about bounds and failures rather than about Qwen3's exact tokens.
 */
final class TinyModel {
    private TinyModel() {
    }

    static PromptArtifacts withTemplate(Path dir, String key, String template) throws IOException {
        Path tokenizer = dir.resolve("tokenizer.json");
        if (!Files.exists(tokenizer)) {
            try (InputStream in = Objects.requireNonNull(
                    TinyModel.class.getResourceAsStream("/prompt/tiny/tokenizer.json"))) {
                Files.write(tokenizer, in.readAllBytes());
            }
        }
        Path file = dir.resolve(key + ".jinja");
        Files.writeString(file, template, StandardCharsets.UTF_8);
        return new PromptArtifacts(key, tokenizer, Optional.empty(), Optional.of(file));
    }

    /** A chat body with one user message of {@code content}. */
    static byte[] body(String content) {
        return ("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static final String PLAIN = "{% for m in messages %}{{ m.role }} {{ m.content }} {% endfor %}assistant";
}
