package dev.continuum.router.kv.hash;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Block hashes of conversation prefixes, so that a prompt whose leading tokens were seen hashes only its new
 * blocks. Keyed by the prefix's key from the prompt pipeline ({@link PromptPrefix}: a strong hash of the messages,
 * template and tokenizer) mixed with the hash seed and the block size; bounded in bytes
 * ({@code dynamo.kv.block_hash_cache_bytes}), least recently used first out.
 */
public final class BlockHashCache extends ByteBoundedCache<long[]> {
    /** Where the cache reports (metrics). */
    public interface Stats {
        void lookup(boolean hit);

        Stats NONE = hit -> { };
    }

    private final Stats stats;

    public BlockHashCache(long maxBytes, Listener listener, Stats stats) {
        super(maxBytes, listener);
        this.stats = stats;
    }

    @Override
    protected long weigh(long[] hashes) {
        return 8L * hashes.length;
    }

    /**
     * Every complete block's hash of {@code tokens} under {@code hasher}: the leading blocks from the cache when
     * {@code prefix} names a reused prefix whose hashes are there, the rest computed; then the hashes of the
     * prefix a later prompt will reuse are cached.
     */
    public long[] blockHashes(BlockHasher hasher, int[] tokens, int blockSize, @Nullable PromptPrefix prefix) {
        long[] out = new long[BlockHasher.completeBlocks(tokens.length, blockSize)];
        if (prefix == null || !enabled()) {
            hasher.blockHashes(tokens, tokens.length, blockSize, out);
            return out;
        }
        int from = 0;
        ByteBoundedCache.Key reused = prefix.reused();
        if (reused != null) {
            long[] cached = get(key(reused, hasher.seed(), blockSize));
            stats.lookup(cached != null);
            if (cached != null) {
                from = Math.min(Math.min(cached.length, out.length), prefix.reusedTokens() / blockSize);
                System.arraycopy(cached, 0, out, 0, from);
            }
        }
        hasher.blockHashes(tokens, tokens.length, blockSize, from, out);
        ByteBoundedCache.Key next = prefix.next();
        int nextBlocks = Math.min(out.length, prefix.nextTokens() / blockSize);
        if (next != null && nextBlocks > 0) {
            put(key(next, hasher.seed(), blockSize), Arrays.copyOf(out, nextBlocks));
        }
        return out;
    }

    /** The prefix's key mixed with the hasher's seed value and the block size (both change every hash). */
    static Key key(Key prefix, long seed, int blockSize) {
        long h = prefix.hi() ^ (seed * 0x9E3779B97F4A7C15L);
        long l = prefix.lo() ^ Long.rotateLeft(blockSize * 0xC2B2AE3D27D4EB4FL, 31);
        return new Key(h, l);
    }
}
