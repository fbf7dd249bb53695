package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonValue;

/** {@code backends[].role}: which phase of disaggregated serving a backend takes. */
public enum BackendRole {
    UNIFIED("unified"),
    PREFILL("prefill"),
    DECODE("decode");

    private final String yamlName;

    BackendRole(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The name the YAML uses; also the readback's. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }
}
