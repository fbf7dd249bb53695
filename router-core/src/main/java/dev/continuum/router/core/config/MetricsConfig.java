package dev.continuum.router.core.config;

/** {@code metrics}: the Prometheus endpoint ({@code METRICS_ENABLED} / {@code METRICS_ENDPOINT} override). */
public record MetricsConfig(boolean enabled, String endpoint) {
    public static MetricsConfig defaults() {
        return new MetricsConfig(true, "/metrics");
    }
}
