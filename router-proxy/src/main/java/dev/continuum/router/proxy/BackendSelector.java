package dev.continuum.router.proxy;

import dev.continuum.router.core.config.ConsistentHashConfig;
import dev.continuum.router.core.config.SelectionStrategy;
import java.util.List;

/** Picks one backend among a request's candidates. Implementations are lock-free. */
interface BackendSelector {

    /** {@code candidates} is non-empty; every element belongs to the generation this selector was built for. */
    Backend pick(List<Backend> candidates);

    /**
     * As {@link #pick(List)}, for a request whose affinity key is {@code key} (0 = none); only
     * {@code ConsistentHash} routes by it.
     */
    default Backend pick(List<Backend> candidates, long key) {
        return pick(candidates);
    }

    /** @param backends every backend of the generation, in configuration order (indexes match) */
    static BackendSelector of(SelectionStrategy strategy, List<Backend> backends, ConsistentHashConfig hash) {
        return switch (strategy) {
            case ROUND_ROBIN -> new RoundRobinSelector();
            case WEIGHTED_ROUND_ROBIN -> new WeightedRoundRobinSelector(backends.size());
            case RANDOM -> new RandomSelector();
            case LEAST_CONNECTIONS -> new LeastConnectionsSelector();
            case LEAST_LATENCY -> new LeastLatencySelector();
            case CONSISTENT_HASH -> new ConsistentHashSelector(backends, hash.loadFactor(), hash.virtualNodes());
        };
    }
}
