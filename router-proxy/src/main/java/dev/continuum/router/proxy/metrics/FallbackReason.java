package dev.continuum.router.proxy.metrics;

/** The {@code reason} label of {@code continuum_model_fallbacks_total}: the trigger condition that fired. */
public enum FallbackReason {
    ERROR_CODE("error_code"),
    TIMEOUT("timeout"),
    CONNECTION_ERROR("connection_error"),
    MODEL_NOT_FOUND("model_not_found"),
    CIRCUIT_BREAKER_OPEN("circuit_breaker_open");

    private final String label;

    FallbackReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
