package dev.continuum.router.sim;

import net.openhft.hashing.LongHashFunction;

/**
 * A prompt's KV blocks as a Dynamo worker names them in its kv-events (ai-dynamo/dynamo
 * {@code lib/kv-router/src/protocols.rs}, {@code compute_block_hash_for_seq} and the sequence-hash chain): each
 * complete block of {@code blockSize} token IDs, as u32 little-endian bytes, hashed with XXH3-64 seeded 1337 (its
 * {@code tokens_hash}); a trailing partial block is not a block. The chain's first sequence hash is the first
 * block's hash; each next one is XXH3-64 (seed 1337) of the previous sequence hash and the block's hash, both u64
 * little-endian. The simulator names a block by its sequence hash (the engine's {@code block_hash}), which is
 * unique to the block's whole prefix.
 *
 * <p>Written for the simulator only: it shares nothing with the router's hashing, so each checks the other.
 */
record TokenBlocks(long[] tokenHashes, long[] seqHashes) {
    static final long SEED = 1337;
    private static final LongHashFunction XXH3 = LongHashFunction.xx3(SEED);

    static TokenBlocks of(int[] tokens, int blockSize) {
        int n = tokens.length / blockSize;
        long[] local = new long[n];
        long[] seq = new long[n];
        byte[] block = new byte[blockSize * 4];
        byte[] pair = new byte[16];
        for (int b = 0; b < n; b++) {
            for (int i = 0; i < blockSize; i++) {
                putLe(block, i * 4, tokens[b * blockSize + i], 4);
            }
            local[b] = XXH3.hashBytes(block);
            if (b == 0) {
                seq[b] = local[b];
            } else {
                putLe(pair, 0, seq[b - 1], 8);
                putLe(pair, 8, local[b], 8);
                seq[b] = XXH3.hashBytes(pair);
            }
        }
        return new TokenBlocks(local, seq);
    }

    int size() {
        return seqHashes.length;
    }

    private static void putLe(byte[] out, int at, long value, int bytes) {
        for (int i = 0; i < bytes; i++) {
            out[at + i] = (byte) (value >>> (8 * i));
        }
    }
}
