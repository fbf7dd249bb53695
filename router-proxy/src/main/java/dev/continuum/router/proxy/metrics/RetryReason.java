package dev.continuum.router.proxy.metrics;

/** The {@code reason} label of {@code continuum_retries_total}. */
public enum RetryReason {
    CONNECT_FAILURE("connect_failure"), STATUS_502("status_502"), STATUS_503("status_503");

    private final String label;

    RetryReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
