package dev.continuum.router.kv.index;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PrefixOverlap;

/**
 * The KV-aware picker's view: per rank, the deeper of what kv-events put in the {@link RadixIndex} and what the
 * router predicted ({@link PredictedBlocks}). Both lookups are lock-free and allocation-free at steady state; an
 * empty overlay costs one volatile read.
 */
public final class PredictedOverlap implements PrefixOverlap {
    private final RadixIndex index;
    private final PredictedBlocks predicted;

    public PredictedOverlap(RadixIndex index, PredictedBlocks predicted) {
        this.index = index;
        this.predicted = predicted;
    }

    @Override
    public void findMatches(BlockHashes hashes, OverlapScores out) {
        index.findMatches(hashes, out);
        predicted.deepen(hashes.hashes(), out);
    }
}
