package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The whole validated configuration. Immutable: a reload builds a new one and swaps it in.
 *
 * @param consistentHash the {@code ConsistentHash} settings; null (and left out of the readback) with another strategy
 * @param globalPrompts  {@code global_prompts}; null (and left out of the readback) when the section is absent
 * @param source the file it was read from, or null for built-in defaults / an in-memory document
 */
public record RouterConfig(
        ServerConfig server,
        List<BackendConfig> backends,
        SelectionStrategy selectionStrategy,
        HealthCheckConfig healthChecks,
        CircuitBreakerConfig circuitBreaker,
        RetryConfig retry,
        RateLimitingConfig rateLimiting,
        ApiKeysConfig apiKeys,
        AdminConfig admin,
        DisaggregatedServingConfig disaggregatedServing,
        LoggingConfig logging,
        MetricsConfig metrics,
        DynamoConfig dynamo,
        TimeoutsConfig timeouts,
        FallbackConfig fallback,
        @Nullable ConsistentHashConfig consistentHash,
        @Nullable GlobalPromptsConfig globalPrompts,
        @JsonIgnore @Nullable Path source) {

    public RouterConfig {
        backends = List.copyOf(backends);
    }

    /** Every section but {@code global_prompts} (absent). */
    public RouterConfig(ServerConfig server, List<BackendConfig> backends, SelectionStrategy selectionStrategy,
                        HealthCheckConfig healthChecks, CircuitBreakerConfig circuitBreaker, RetryConfig retry,
                        RateLimitingConfig rateLimiting, ApiKeysConfig apiKeys, AdminConfig admin,
                        DisaggregatedServingConfig disaggregatedServing, LoggingConfig logging, MetricsConfig metrics,
                        DynamoConfig dynamo, TimeoutsConfig timeouts, FallbackConfig fallback,
                        @Nullable ConsistentHashConfig consistentHash, @Nullable Path source) {
        this(server, backends, selectionStrategy, healthChecks, circuitBreaker, retry, rateLimiting, apiKeys, admin,
                disaggregatedServing, logging, metrics, dynamo, timeouts, fallback, consistentHash, null, source);
    }

    /** The sections every build had, with {@code timeouts}, {@code fallback} and {@code consistent_hash} at their defaults. */
    public RouterConfig(ServerConfig server, List<BackendConfig> backends, SelectionStrategy selectionStrategy,
                        HealthCheckConfig healthChecks, CircuitBreakerConfig circuitBreaker, RetryConfig retry,
                        RateLimitingConfig rateLimiting, ApiKeysConfig apiKeys, AdminConfig admin,
                        DisaggregatedServingConfig disaggregatedServing, LoggingConfig logging, MetricsConfig metrics,
                        DynamoConfig dynamo, @Nullable Path source) {
        this(server, backends, selectionStrategy, healthChecks, circuitBreaker, retry, rateLimiting, apiKeys, admin,
                disaggregatedServing, logging, metrics, dynamo, TimeoutsConfig.defaults(), FallbackConfig.defaults(),
                null, null, source);
    }

    /** Every section at its default and no backend: what an empty YAML document yields. */
    public static RouterConfig defaults() {
        return new RouterConfig(ServerConfig.defaults(), List.of(), SelectionStrategy.ROUND_ROBIN,
                HealthCheckConfig.defaults(), CircuitBreakerConfig.defaults(), RetryConfig.defaults(),
                RateLimitingConfig.defaults(), ApiKeysConfig.defaults(), AdminConfig.disabled(),
                DisaggregatedServingConfig.defaults(), LoggingConfig.defaults(), MetricsConfig.defaults(),
                DynamoConfig.disabled(), null);
    }

    public Optional<BackendConfig> backend(String name) {
        return backends.stream().filter(b -> b.name().equals(name)).findFirst();
    }

    public RouterConfig withServer(ServerConfig s) {
        return new RouterConfig(s, backends, selectionStrategy, healthChecks, circuitBreaker, retry, rateLimiting,
                apiKeys, admin, disaggregatedServing, logging, metrics, dynamo, timeouts, fallback, consistentHash,
                globalPrompts, source);
    }

    public RouterConfig withBackends(List<BackendConfig> b) {
        return new RouterConfig(server, b, selectionStrategy, healthChecks, circuitBreaker, retry, rateLimiting,
                apiKeys, admin, disaggregatedServing, logging, metrics, dynamo, timeouts, fallback, consistentHash,
                globalPrompts, source);
    }
}
