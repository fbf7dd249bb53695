package dev.continuum.router.kv.prompt;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Verified local copies of the artifacts one model's prompt is encoded with, as the model card's
 * {@code CheckedFile} slots name them. Callers hand over only files whose checksum is pinned and was verified.
 *
 * @param key           identifies this artifact set (the tokenizer's checksum plus the template's); equal keys
 *                      mean equal encodings, so a loaded tokenizer is cached by it
 * @param tokenizerJson the card's {@code tokenizer} ({@code tokenizer.json})
 * @param tokenizerConfig the card's {@code prompt_formatter} ({@code tokenizer_config.json}), holding the chat
 *                      template and the special tokens it refers to, when the card has one
 * @param chatTemplate  the card's {@code chat_template_file}, which overrides the config's template
 */
public record PromptArtifacts(String key, Path tokenizerJson, Optional<Path> tokenizerConfig,
                              Optional<Path> chatTemplate) {
}
