package dev.continuum.router.kv.hash;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;

/**
 * Block hashes exactly as a Dynamo worker computes them for its KV events (ai-dynamo/dynamo
 * {@code lib/kv-router/src/protocols.rs} {@code compute_block_hash_for_seq}, and {@code lib/kv-hashing/src/salt.rs}
 * for the hash seed): the token IDs of each complete block as unsigned 32-bit little-endian integers, hashed with
 * XXH3-64. A trailing partial block is not hashed.
 *
 * <p>The hash seed is 1337, plus (wrapping) XXH3-64 of the LoRA name with seed 0 when there is one, plus
 * XXH3-64 of the request's cache salt with seed 1 when there is one; an empty string counts as absent. The
 * sequence (chained) hash always uses 1337.
 *
 * <p>Per block nothing is allocated: the ints are hashed in place (their native order is little-endian on every
 * platform this runs on; another order takes a copying path).
 */
public final class BlockHasher {
    /** Upstream's {@code XXH3_SEED}. */
    public static final long BASE_SEED = 1337;
    /** Block sizes a model's card may declare and still be hashed ({@code kv_cache_block_size}). */
    public static final int MIN_BLOCK_SIZE = 16;
    public static final int MAX_BLOCK_SIZE = 65_536;

    private static final LongHashFunction BASE = LongHashFunction.xx3(BASE_SEED);
    private static final LongHashFunction LORA = LongHashFunction.xx3(0);
    private static final LongHashFunction SALT = LongHashFunction.xx3(1);
    private static final boolean NATIVE_LE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final LongHashFunction function;
    private final long seed;

    private BlockHasher(LongHashFunction function, long seed) {
        this.function = function;
        this.seed = seed;
    }

    /** This hasher's XXH3 seed value (LoRA and salt folded in). */
    public long seed() {
        return seed;
    }

    /** A hasher for requests without LoRA or salt (the common case: no allocation at all). */
    public static BlockHasher unsalted() {
        return UNSALTED;
    }

    private static final BlockHasher UNSALTED = new BlockHasher(BASE, BASE_SEED);

    /** A hasher seeded for {@code loraName} and {@code cacheSalt} (either may be null or empty). */
    public static BlockHasher of(@Nullable String loraName, @Nullable String cacheSalt) {
        long seed = seed(loraName, cacheSalt);
        return seed == BASE_SEED ? UNSALTED : new BlockHasher(LongHashFunction.xx3(seed), seed);
    }

    /** The block-hash seed; wrapping u64 arithmetic, as upstream's {@code wrapping_add}. */
    public static long seed(@Nullable String loraName, @Nullable String cacheSalt) {
        long seed = BASE_SEED;
        if (loraName != null && !loraName.isEmpty()) {
            seed += LORA.hashBytes(loraName.getBytes(StandardCharsets.UTF_8));
        }
        if (cacheSalt != null && !cacheSalt.isEmpty()) {
            seed += SALT.hashBytes(cacheSalt.getBytes(StandardCharsets.UTF_8));
        }
        return seed;
    }

    /** How many complete blocks {@code tokenCount} tokens make. */
    public static int completeBlocks(int tokenCount, int blockSize) {
        return tokenCount / blockSize;
    }

    /** Whether a card's {@code kv_cache_block_size} can be hashed. */
    public static boolean supported(int blockSize) {
        return blockSize >= MIN_BLOCK_SIZE && blockSize <= MAX_BLOCK_SIZE;
    }

    /**
     * Writes the hash of every complete block of {@code tokens[0..tokenCount)} into {@code out} (which must hold
     * {@link #completeBlocks} entries) and returns how many were written.
     */
    public int blockHashes(int[] tokens, int tokenCount, int blockSize, long[] out) {
        return blockHashes(tokens, tokenCount, blockSize, 0, out);
    }

    /**
     * As {@link #blockHashes(int[], int, int, long[])}, but the first {@code fromBlock} entries of {@code out}
     * are taken as already written (a prefix's cached hashes) and only the blocks after them are hashed.
     */
    public int blockHashes(int[] tokens, int tokenCount, int blockSize, int fromBlock, long[] out) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size " + blockSize);
        }
        int blocks = completeBlocks(Math.min(tokenCount, tokens.length), blockSize);
        if (out.length < blocks) {
            throw new IllegalArgumentException("out holds " + out.length + " of " + blocks + " hashes");
        }
        byte[] scratch = NATIVE_LE ? null : new byte[blockSize * 4];
        for (int b = Math.max(0, fromBlock); b < blocks; b++) {
            out[b] = scratch == null ? function.hashInts(tokens, b * blockSize, blockSize)
                    : hashLittleEndian(tokens, b * blockSize, blockSize, scratch);
        }
        return blocks;
    }

    /** Every complete block's hash, in a new array. */
    public long[] blockHashes(int[] tokens, int blockSize) {
        long[] out = new long[completeBlocks(tokens.length, blockSize)];
        blockHashes(tokens, tokens.length, blockSize, out);
        return out;
    }

    private long hashLittleEndian(int[] tokens, int from, int len, byte[] scratch) {
        for (int i = 0; i < len; i++) {
            int t = tokens[from + i];
            scratch[4 * i] = (byte) t;
            scratch[4 * i + 1] = (byte) (t >>> 8);
            scratch[4 * i + 2] = (byte) (t >>> 16);
            scratch[4 * i + 3] = (byte) (t >>> 24);
        }
        return function.hashBytes(scratch, 0, len * 4);
    }

    /**
     * The chained hashes of {@code blockHashes} (upstream's {@code compute_seq_hash_for_block}): the first equals
     * the first block hash, each next one is XXH3-64 (seed 1337) of the previous and the block hash as two u64 LE.
     */
    public static long[] sequenceHashes(long[] blockHashes, int count) {
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
            out[i] = i == 0 ? blockHashes[0] : chain(out[i - 1], blockHashes[i]);
        }
        return out;
    }

    /**
     * The chained hash of a block whose parent's chained hash is {@code parent}: one step of
     * {@link #sequenceHashes}, for a block learnt from a KV event rather than from a whole prompt.
     *
     * <p>XXH3-64 (seed 1337) of the 16 bytes {@code parent, blockHash} (u64 little-endian), computed directly: for
     * inputs of 9 to 16 bytes XXH3 XORs the first and last eight bytes with two seeded constants taken from its
     * default secret, adds the length, the first word byte-swapped, the last word and the 128-bit product of the
     * two words folded to 64 bits, and finishes with its avalanche step. Written out, one step costs a few
     * multiplications instead of a general-purpose hash call over a scratch array; {@code BlockHasherTest} checks
     * it against the library's XXH3 and python3-xxhash.
     */
    public static long chain(long parent, long blockHash) {
        long lo = parent ^ (SECRET_24_32 + BASE_SEED);
        long hi = blockHash ^ (SECRET_40_48 - BASE_SEED);
        long productLow = lo * hi;
        long productHigh = Math.multiplyHigh(lo, hi) + ((lo >> 63) & hi) + ((hi >> 63) & lo); // unsigned
        long acc = 16 + Long.reverseBytes(lo) + hi + (productLow ^ productHigh);
        acc ^= acc >>> 37;
        acc *= 0x165667919E3779F9L;
        return acc ^ (acc >>> 32);
    }

    /** XXH3's default secret, bytes 24..31 XOR 32..39 and 40..47 XOR 48..55, as u64 little-endian. */
    private static final long SECRET_24_32 = 0x6782737bea4239b9L;
    private static final long SECRET_40_48 = 0xaf56bc3b0996523aL;
}
