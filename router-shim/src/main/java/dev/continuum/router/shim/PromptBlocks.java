package dev.continuum.router.shim;

import java.io.IOException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the KV pipeline computed for one request's prompt, for the picker: the rendered prompt's length and its
 * block hashes for each of the model's block sizes (one or two).
 *
 * @param promptTokens the rendered prompt's token count (the formula's {@code isl})
 * @param blockHashes  one entry per distinct {@code kv_cache_block_size} of the model's workers
 * @param tokenData    the rendered body with the token IDs as {@code nvext.token_data}, made only when a plan
 *                     wants it; null when {@code send_token_data} is off
 */
public record PromptBlocks(int promptTokens, List<BlockHashes> blockHashes, @Nullable TokenData tokenData)
        implements PromptOutcome {
    public PromptBlocks {
        if (promptTokens < 0) {
            throw new IllegalArgumentException("promptTokens: " + promptTokens);
        }
        blockHashes = List.copyOf(blockHashes);
    }

    /** A prompt without a token-data body. */
    public PromptBlocks(int promptTokens, List<BlockHashes> blockHashes) {
        this(promptTokens, blockHashes, null);
    }

    /** The body a plan may pin instead of each replica's own rewrite; built once, when asked. */
    @FunctionalInterface
    public interface TokenData {
        byte[] body() throws IOException;
    }
}
