package dev.continuum.router.proxy;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * nginx's smooth weighted round robin: every pick adds each candidate's weight to its current
 * weight, takes the largest, and subtracts the total from the winner. Over any run of
 * {@code sum(weights)} picks with the same candidates each backend is chosen exactly
 * {@code weight} times, interleaved rather than in bursts. The current weights of the whole
 * generation (indexed by {@link Backend#index()}) are one immutable array swapped by
 * compare-and-set; non-candidates keep their value, as nginx skips down peers.
 */
final class WeightedRoundRobinSelector implements BackendSelector {
    private final AtomicReference<long[]> current;

    WeightedRoundRobinSelector(int backendCount) {
        this.current = new AtomicReference<>(new long[backendCount]);
    }

    @Override
    public Backend pick(List<Backend> candidates) {
        if (candidates.size() == 1) {
            return candidates.get(0);
        }
        for (;;) {
            long[] prev = Objects.requireNonNull(current.get()); // set here, only ever swapped for a new array
            long[] next = prev.clone();
            long total = 0;
            Backend best = null;
            for (int i = 0; i < candidates.size(); i++) {
                Backend b = candidates.get(i);
                int w = b.config().weight();
                next[b.index()] += w;
                total += w;
                if (best == null || next[b.index()] > next[best.index()]) {
                    best = b;
                }
            }
            Objects.requireNonNull(best, "no candidates"); // callers pick among one or more
            next[best.index()] -= total;
            if (current.compareAndSet(prev, next)) {
                return best;
            }
        }
    }
}
