package dev.continuum.router.kv.hash;

import org.jspecify.annotations.Nullable;

/**
 * What the prompt pipeline knows of a prompt's leading tokens, for the block hashes ({@link BlockHashCache}): the
 * first {@code reusedTokens} token IDs are those of a prefix seen before under {@code reused} (whose block hashes
 * may be cached), and the first {@code nextTokens} are those of the prefix a later prompt will reuse under
 * {@code next}. Keys identify a conversation prefix (its messages, template and tokenizer), never token IDs
 * directly.
 *
 * @param reused       the key of the reused prefix, or null when nothing was reused
 * @param reusedTokens how many leading tokens it covers (0 without one)
 * @param next         the key later prompts will reuse, or null
 * @param nextTokens   how many leading tokens that prefix covers (0 without one)
 */
public record PromptPrefix(ByteBoundedCache.@Nullable Key reused, int reusedTokens,
                           ByteBoundedCache.@Nullable Key next, int nextTokens) {
}
