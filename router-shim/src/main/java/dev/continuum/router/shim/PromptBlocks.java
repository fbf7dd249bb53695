package dev.continuum.router.shim;

import java.util.List;

/**
 * What the KV pipeline computed for one request's prompt, for the picker: the rendered prompt's length and its
 * block hashes for each of the model's block sizes (one or two).
 *
 * @param promptTokens the rendered prompt's token count (the formula's {@code isl})
 * @param blockHashes  one entry per distinct {@code kv_cache_block_size} of the model's workers
 */
public record PromptBlocks(int promptTokens, List<BlockHashes> blockHashes) {
    public PromptBlocks {
        if (promptTokens < 0) {
            throw new IllegalArgumentException("promptTokens: " + promptTokens);
        }
        blockHashes = List.copyOf(blockHashes);
    }
}
