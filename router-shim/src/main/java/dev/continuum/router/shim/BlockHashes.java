package dev.continuum.router.shim;

import java.util.Objects;

/**
 * One request's block hashes for one block size, as the worker computes them for its KV events (see
 * {@code docs/kv-routing.md}): what a KV-aware picker looks the index up with.
 *
 * @param blockSize tokens per block ({@code kv_cache_block_size} of the model's workers)
 * @param hashes    the hash of each complete block, in prompt order; owned by this record, never modified
 */
public record BlockHashes(int blockSize, long[] hashes) {
    public BlockHashes {
        Objects.requireNonNull(hashes, "hashes");
    }

    public int blocks() {
        return hashes.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BlockHashes b && b.blockSize == blockSize && java.util.Arrays.equals(b.hashes, hashes);
    }

    @Override
    public int hashCode() {
        return 31 * blockSize + java.util.Arrays.hashCode(hashes);
    }

    @Override
    public String toString() {
        return "BlockHashes[blockSize=" + blockSize + ", blocks=" + hashes.length + "]";
    }
}
