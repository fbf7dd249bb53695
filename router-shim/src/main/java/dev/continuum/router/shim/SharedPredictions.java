package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import org.jspecify.annotations.Nullable;

/**
 * Replica sync's seam into the predicted cache (docs/replicas.md, "Approximate mode"): in approximate mode a
 * replica's picks are all its index knows, so each replica tells its peers what it predicted, in a sparse form that
 * fits the per-request wire budget, and folds what its peers predicted into its own overlay, per peer.
 *
 * <p>A prediction travels as a <em>sample</em>: the prompt's blocks chained from a fixed root (a key at position
 * {@code i} stands for the whole prefix {@code 0..i}), kept at every {@code stride}-th block. The receiver matches a
 * prompt to the deepest sampled position it shares, so it loses at most {@code stride - 1} blocks of overlap.
 *
 * <p>{@link #sample} runs on the sequence drainer (never blocks); {@link #peerPredicted} and {@link #forgetPeer} on
 * the replica-sync thread only.
 */
public interface SharedPredictions {
    /** The smallest stride, in blocks; every stride is it doubled, so a lookup probes the same positions. */
    int MIN_STRIDE = 16;
    /** The largest stride a sample may name. */
    int MAX_STRIDE = 512;
    /** Keys in one sample at most (8 bytes each on the wire). */
    int MAX_KEYS = 24;

    /** Whether {@code stride} is one a sender may choose: {@link #MIN_STRIDE} doubled, up to {@link #MAX_STRIDE}. */
    static boolean validStride(int stride) {
        return stride >= MIN_STRIDE && stride <= MAX_STRIDE && Integer.bitCount(stride) == 1;
    }

    /** Nothing shared: precise routing, or no KV routing in this process. */
    SharedPredictions NONE = new SharedPredictions() {
        @Override
        public @Nullable Sample sample(SampleKey rank, BlockHashes hashes) {
            return null;
        }

        @Override
        public void peerPredicted(int peer, SampleKey rank, int stride, long[] keys) {
        }

        @Override
        public void forgetPeer(int peer) {
        }
    };

    /** A prediction as it travels: the chained keys at blocks {@code stride-1, 2*stride-1, ...}, shallowest first. */
    record Sample(int stride, long[] keys) {
    }

    /**
     * The sample of this replica's prediction that {@code rank} holds {@code hashes}, or null when its namespace is
     * not in approximate mode (precise mode: kv-events tell every replica already) or the prompt is shorter than one
     * stride.
     */
    @Nullable Sample sample(SampleKey rank, BlockHashes hashes);

    /** Peer {@code peer} (a partition number, never 0) predicted that {@code rank} holds the sampled prefix. */
    void peerPredicted(int peer, SampleKey rank, int stride, long[] keys);

    /** Peer {@code peer} left or restarted: everything it predicted leaves with it. */
    void forgetPeer(int peer);
}
