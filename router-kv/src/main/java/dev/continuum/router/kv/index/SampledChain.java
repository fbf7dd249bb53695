package dev.continuum.router.kv.index;

import dev.continuum.router.shim.SharedPredictions;
import org.jspecify.annotations.Nullable;

/**
 * The form in which replicas share predictions (docs/replicas.md, "Approximate mode"): a prompt's per-block hashes
 * chained from a fixed root, so every replica computes the same key for the same prefix (the radix index's own
 * path keys start from a per-process secret root and mean nothing elsewhere), kept at every {@code stride}-th
 * block. The stride is {@value #MIN_STRIDE} blocks, doubled until at most {@value #MAX_KEYS} keys remain, so a
 * prediction costs at most {@value #MAX_KEYS} x 8 bytes on the wire and loses at most {@code stride - 1} blocks.
 * Every stride is a multiple of {@value #MIN_STRIDE}: a lookup probes the same positions whatever stride a peer
 * chose.
 *
 * <p>The chain is one multiply per block (a lookup computes it beside the index's own keys while peers' samples
 * exist): the block hashes are already uniform. A receiver never stores a wire key as it came: it keys its table
 * with {@link #tableKey}, mixed with its own secret, so a peer cannot aim entries at one probe run.
 */
public final class SampledChain {
    public static final int MIN_STRIDE = SharedPredictions.MIN_STRIDE;
    public static final int MAX_STRIDE = SharedPredictions.MAX_STRIDE;
    public static final int MAX_KEYS = SharedPredictions.MAX_KEYS;
    private static final long ROOT = 0x436F6E74696E7575L; // "Continuu"
    private static final long MIX = 0x9E3779B97F4A7C15L;

    private SampledChain() {
    }

    /** The wire key of the prefix ending one block after the prefix keyed {@code parent}. */
    static long next(long parent, long blockHash) {
        long z = (parent ^ blockHash) * MIX;
        return z ^ (z >>> 32);
    }

    static long root() {
        return ROOT;
    }

    /** Whether block position {@code i} (0-based) is a position any stride samples. */
    static boolean sampled(int i) {
        return ((i + 1) & (MIN_STRIDE - 1)) == 0;
    }

    /** The receiver's table key for a peer's wire key ({@code secret}: its index's root key). */
    static long tableKey(long secret, long wireKey) {
        return ChildTable.step(~secret, wireKey);
    }

    /** The stride for a prompt of {@code blocks} blocks: the smallest that keeps {@value #MAX_KEYS} keys or fewer. */
    public static int stride(int blocks) {
        int stride = MIN_STRIDE;
        while (blocks / stride > MAX_KEYS && stride < MAX_STRIDE) {
            stride <<= 1;
        }
        return stride;
    }

    /** The sampled keys of {@code hashes} (its first {@code limit} blocks), or null when shorter than one stride. */
    public static long @Nullable [] sample(long[] hashes, int limit, int stride) {
        int blocks = Math.min(hashes.length, limit);
        int n = Math.min(blocks / stride, MAX_KEYS);
        if (n == 0) {
            return null;
        }
        long[] keys = new long[n];
        long w = ROOT;
        for (int i = 0, k = 0; k < n; i++) {
            w = next(w, hashes[i]);
            if ((i + 1) % stride == 0) {
                keys[k++] = w;
            }
        }
        return keys;
    }
}
