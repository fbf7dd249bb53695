package dev.continuum.router.proxy.metrics;

/** The {@code tier} label of {@code continuum_rate_limited_total}: which bucket said no. */
public enum RateLimitTier {
    GLOBAL("global"), API_KEY("api_key"), CLIENT("client"), BACKEND("backend");

    private final String label;

    RateLimitTier(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
