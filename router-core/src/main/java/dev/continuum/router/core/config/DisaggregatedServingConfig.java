package dev.continuum.router.core.config;

/** {@code disaggregated_serving}: prefill/decode orchestration; {@code fallback_to_unified} defaults to true. */
public record DisaggregatedServingConfig(boolean enabled, boolean fallbackToUnified) {
    public static DisaggregatedServingConfig defaults() {
        return new DisaggregatedServingConfig(false, true);
    }
}
