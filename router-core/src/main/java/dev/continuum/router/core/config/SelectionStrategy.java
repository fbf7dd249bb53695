package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonValue;

/** {@code selection_strategy}: how one backend is chosen among the healthy ones that serve a model. */
public enum SelectionStrategy {
    ROUND_ROBIN("RoundRobin"),
    WEIGHTED_ROUND_ROBIN("WeightedRoundRobin");

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
