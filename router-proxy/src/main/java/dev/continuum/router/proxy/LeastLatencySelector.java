package dev.continuum.router.proxy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code LeastLatency}: the candidate with the lowest moving average of response-head latency
 * ({@link BackendResources#recordLatency}). A backend without a sample yet is taken first, so every backend is
 * measured before the averages decide; the scan starts at a rotating offset so equal averages (and several
 * unmeasured backends) are shared out.
 */
final class LeastLatencySelector implements BackendSelector {
    private final AtomicInteger start = new AtomicInteger();

    @Override
    public Backend pick(List<Backend> candidates) {
        int n = candidates.size();
        int offset = Math.floorMod(start.getAndIncrement(), n);
        Backend best = null;
        long bestLatency = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            Backend b = candidates.get((offset + i) % n);
            long latency = b.resources().latencyEwmaNanos.get();
            if (latency == 0) {
                return b;
            }
            if (latency < bestLatency) {
                best = b;
                bestLatency = latency;
            }
        }
        return best == null ? candidates.get(offset) : best;
    }
}
