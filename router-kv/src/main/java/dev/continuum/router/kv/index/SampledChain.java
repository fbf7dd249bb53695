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
 * <p>The chain takes a group of {@value #MIN_STRIDE} blocks at a time: the group's hashes, each multiplied by an
 * odd constant of its place in the group, are summed (independent multiplies the CPU overlaps, so blocks swapped
 * within a group change the sum), and the sum is mixed into the chain with {@link ChildTable#step}: one full mix per
 * group instead of one per block, for the sender and for every lookup while peers' samples exist. A receiver never stores a wire key as it came: it keys its table
 * with {@link #tableKey}, mixed with its own secret, so a peer cannot aim entries at one probe run.
 */
public final class SampledChain {
    public static final int MIN_STRIDE = SharedPredictions.MIN_STRIDE;
    public static final int MAX_STRIDE = SharedPredictions.MAX_STRIDE;
    public static final int MAX_KEYS = SharedPredictions.MAX_KEYS;
    private static final long ROOT = 0x436F6E74696E7575L; // "Continuu"
    /** The odd multiplier of each place in a group: {@code step(0, place + 1) | 1}. */
    private static final long[] PLACE = new long[MIN_STRIDE];

    static {
        for (int j = 0; j < MIN_STRIDE; j++) {
            PLACE[j] = ChildTable.step(0, j + 1) | 1;
        }
    }

    private SampledChain() {
    }

    /** The wire key of the prefix that extends the prefix keyed {@code parent} by the group at {@code from}. */
    static long next(long parent, long[] hashes, int from) {
        long g = 0;
        for (int j = 0; j < MIN_STRIDE; j++) {
            g += hashes[from + j] * PLACE[j];
        }
        return ChildTable.step(parent, g);
    }

    static long root() {
        return ROOT;
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

    /** The sample of a prompt of per-block {@code hashes} at its {@link #stride}, or null when shorter than one. */
    public static SharedPredictions.@Nullable Sample sampleOf(long[] hashes) {
        int stride = stride(hashes.length);
        long[] keys = sample(hashes, hashes.length, stride);
        return keys == null ? null : new SharedPredictions.Sample(stride, keys);
    }

    /**
     * The sampled keys of {@code hashes} (its first {@code limit} blocks), or null when shorter than one stride;
     * {@code stride} must be one {@link SharedPredictions#validStride} admits.
     */
    public static long @Nullable [] sample(long[] hashes, int limit, int stride) {
        if (!SharedPredictions.validStride(stride)) {
            throw new IllegalArgumentException("stride " + stride + " is not " + MIN_STRIDE + " doubled");
        }
        int blocks = Math.min(hashes.length, limit);
        int n = Math.min(blocks / stride, MAX_KEYS);
        if (n == 0) {
            return null;
        }
        long[] keys = new long[n];
        long w = ROOT;
        for (int end = MIN_STRIDE, k = 0, at = stride; k < n; end += MIN_STRIDE) {
            w = next(w, hashes, end - MIN_STRIDE);
            if (end == at) { // every stride is a multiple of MIN_STRIDE: no division per group
                keys[k++] = w;
                at += stride;
            }
        }
        return keys;
    }
}
