package dev.continuum.router.shim;

import java.util.ArrayList;
import java.util.List;

/**
 * A test implementation of {@link PrefixOverlap} (the radix index lives in router-kv): each rank holds a fixed
 * number of leading blocks of whatever prompt is asked about, capped at the prompt's length. It records the
 * lookups so tests can see one per block size and pick.
 */
final class FixedOverlap implements PrefixOverlap {
    private record Held(long worker, int rank, int blocks) {
    }

    private final List<Held> held = new ArrayList<>();
    int lookups;

    FixedOverlap hold(long worker, int rank, int blocks) {
        held.removeIf(h -> h.worker == worker && h.rank == rank);
        held.add(new Held(worker, rank, blocks));
        return this;
    }

    @Override
    public void findMatches(BlockHashes hashes, OverlapScores out) {
        lookups++;
        out.clear();
        for (Held h : held) {
            if (h.blocks > 0) {
                out.add(h.worker, h.rank, Math.min(h.blocks, hashes.blocks()));
            }
        }
    }
}
