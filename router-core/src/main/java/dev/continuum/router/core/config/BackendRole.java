package dev.continuum.router.core.config;

/** {@code backends[].role}: which phase of disaggregated serving a backend takes. */
public enum BackendRole {
    UNIFIED("unified"),
    PREFILL("prefill"),
    DECODE("decode");

    private final String yamlName;

    BackendRole(String yamlName) {
        this.yamlName = yamlName;
    }

    public String yamlName() {
        return yamlName;
    }
}
