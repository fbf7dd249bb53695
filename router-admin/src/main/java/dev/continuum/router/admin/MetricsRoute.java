package dev.continuum.router.admin;

import dev.continuum.router.core.config.MetricsConfig;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.proxy.http.LocalRoute;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The Prometheus scrape endpoint ({@code metrics.endpoint}, default {@code /metrics}), never behind
 * admin auth. Reads {@code metrics.enabled} per call, so turning metrics off by reload answers 404
 * at once. Scraping walks every meter, so it runs off the event loop.
 */
public final class MetricsRoute implements LocalRoute {
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry;
    private final Supplier<MetricsConfig> config;

    public MetricsRoute(PrometheusMeterRegistry registry, Supplier<MetricsConfig> config) {
        this.registry = registry;
        this.config = config;
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public CompletableFuture<LocalResponse> handle(LocalRequest request) {
        if (!config.get().enabled()) {
            return CompletableFuture.completedFuture(AdminRoute.error(404, "not_found_error", "not_found",
                    "Metrics are disabled (metrics.enabled: false)"));
        }
        byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
        return CompletableFuture.completedFuture(new LocalResponse(200, CONTENT_TYPE, body, Map.of()));
    }
}
