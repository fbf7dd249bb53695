package dev.continuum.router.kv.dispatch;

import dev.continuum.router.kv.index.SampledChain;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.SharedPredictions;
import org.jspecify.annotations.Nullable;

/**
 * Replica sync's side of the predicted cache (docs/replicas.md, "Approximate mode"): samples this replica's
 * predictions for approximate namespaces ({@link SampledChain}) and hands peers' samples to the overlay through
 * {@link KvModes}, which knows each namespace's mode, TTL and each worker's capacity. A prompt the picker's lookup
 * already chained (peers' samples held) is not chained again: its keys come from the lookup ({@link
 * dev.continuum.router.kv.index.SampleMemo}).
 */
final class PredictionSharing implements SharedPredictions {
    private final KvModes modes;

    PredictionSharing(KvModes modes) {
        this.modes = modes;
    }

    @Override
    public @Nullable Sample sample(SampleKey rank, BlockHashes hashes) {
        if (!modes.approximate(rank.worker().namespace())) {
            return null;
        }
        long[] h = hashes.hashes();
        // The picker's lookup chained this very prompt while peers' samples were held: reuse its keys.
        long[] keys = modes.sampledByWalk(h);
        return keys != null ? new Sample(SampledChain.stride(h.length), keys) : SampledChain.sampleOf(h);
    }

    @Override
    public void peerPredicted(int peer, SampleKey rank, int stride, long[] keys) {
        modes.peerPredicted(peer, rank.worker(), (int) rank.dpRank(), stride, keys);
    }

    @Override
    public void forgetPeer(int peer) {
        modes.forgetPeer(peer);
    }
}
