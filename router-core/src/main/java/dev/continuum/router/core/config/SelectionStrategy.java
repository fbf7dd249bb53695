package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonValue;

/** {@code selection_strategy}: how one backend is chosen among the healthy ones that serve a model. */
public enum SelectionStrategy {
    ROUND_ROBIN("RoundRobin"),
    WEIGHTED_ROUND_ROBIN("WeightedRoundRobin"),
    /** Uniform over the candidates. */
    RANDOM("Random"),
    /** Fewest requests in flight (ties: the earlier in configuration order after a rotating start). */
    LEAST_CONNECTIONS("LeastConnections"),
    /** Lowest moving average of response-head latency; backends without a sample yet are tried first. */
    LEAST_LATENCY("LeastLatency"),
    /** Bounded-load consistent hashing on the {@code consistent_hash} key. */
    CONSISTENT_HASH("ConsistentHash");

    private final String yamlName;

    SelectionStrategy(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The name the YAML uses; also the readback's. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }
}
