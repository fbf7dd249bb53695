package dev.continuum.router.proxy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code LeastConnections}: the candidate with the fewest attempts in flight ({@link BackendResources#inFlight}).
 * The scan starts at a rotating offset so ties (an idle fleet) spread like round robin instead of all landing on
 * the first backend. Counts are read without a lock: two concurrent picks may see the same minimum, which
 * the next pick corrects.
 */
final class LeastConnectionsSelector implements BackendSelector {
    private final AtomicInteger start = new AtomicInteger();

    @Override
    public Backend pick(List<Backend> candidates) {
        int n = candidates.size();
        int offset = Math.floorMod(start.getAndIncrement(), n);
        Backend best = candidates.get(offset);
        int bestLoad = best.resources().inFlight.get();
        for (int i = 1; i < n && bestLoad > 0; i++) {
            Backend b = candidates.get((offset + i) % n);
            int load = b.resources().inFlight.get();
            if (load < bestLoad) {
                best = b;
                bestLoad = load;
            }
        }
        return best;
    }
}
