package dev.continuum.router.proxy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Cycles over the candidates with one atomic counter per configuration generation. */
final class RoundRobinSelector implements BackendSelector {
    private final AtomicInteger next = new AtomicInteger();

    @Override
    public Backend pick(List<Backend> candidates) {
        // floorMod keeps the index valid after the counter wraps past Integer.MAX_VALUE.
        return candidates.get(Math.floorMod(next.getAndIncrement(), candidates.size()));
    }
}
