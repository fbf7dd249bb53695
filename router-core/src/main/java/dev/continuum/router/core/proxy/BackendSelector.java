package dev.continuum.router.core.proxy;

import dev.continuum.router.core.config.SelectionStrategy;
import java.util.List;

/** Picks one backend among a request's candidates. Implementations are lock-free. */
interface BackendSelector {

    /** {@code candidates} is non-empty; every element belongs to the generation this selector was built for. */
    Backend pick(List<Backend> candidates);

    static BackendSelector of(SelectionStrategy strategy, int backendCount) {
        return switch (strategy) {
            case ROUND_ROBIN -> new RoundRobinSelector();
            case WEIGHTED_ROUND_ROBIN -> new WeightedRoundRobinSelector(backendCount);
        };
    }
}
