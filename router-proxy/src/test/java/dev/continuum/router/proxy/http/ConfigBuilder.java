package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.ApiKeysConfig;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.CircuitBreakerConfig;
import dev.continuum.router.core.config.DisaggregatedServingConfig;
import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.core.config.HealthCheckConfig;
import dev.continuum.router.core.config.RateLimit;
import dev.continuum.router.core.config.RateLimitingConfig;
import dev.continuum.router.core.config.RetryConfig;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.Secret;
import dev.continuum.router.core.config.SelectionStrategy;
import dev.continuum.router.core.config.ServerConfig;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Test-side builder of {@link RouterConfig} through the record constructors. */
final class ConfigBuilder {
    final List<BackendConfig> backends = new ArrayList<>();
    List<BindAddress> binds = List.of(new BindAddress.Tcp("127.0.0.1", 0));
    @Nullable Integer socketMode;
    ByteSize maxBody = ByteSize.ofMiB(10);
    ByteSize maxHeader = ByteSize.ofKiB(16);
    ByteSize maxLine = ByteSize.ofKiB(8);
    Duration requestTimeout = Duration.ofSeconds(30);
    Duration connectTimeout = Duration.ofSeconds(2);
    Duration headerReadTimeout = Duration.ofSeconds(10);
    Duration idleTimeout = Duration.ofSeconds(60);
    int poolSize = 100;
    Duration bodyReadTimeout = ServerConfig.DEFAULT_BODY_READ_TIMEOUT;
    @Nullable ByteSize maxBuffered;
    int maxConnections = ServerConfig.DEFAULT_MAX_CONNECTIONS;
    /** Zero by default: most tests want listeners closed as soon as shutdown begins. */
    Duration shutdownQuietPeriod = Duration.ZERO;
    Duration shutdownGrace = Duration.ofSeconds(5);
    SelectionStrategy strategy = SelectionStrategy.ROUND_ROBIN;
    HealthCheckConfig health = new HealthCheckConfig(false, Duration.ofSeconds(30), Duration.ofSeconds(10), 3, 2,
            "/v1/models", Duration.ofSeconds(1), Duration.ofSeconds(300));
    CircuitBreakerConfig breaker = CircuitBreakerConfig.defaults();
    RetryConfig retry = RetryConfig.defaults();
    RateLimitingConfig rateLimiting = RateLimitingConfig.defaults();
    ApiKeysConfig apiKeys = ApiKeysConfig.defaults();
    DisaggregatedServingConfig disaggregated = DisaggregatedServingConfig.defaults();
    @Nullable GlobalPromptsConfig globalPrompts;

    static ConfigBuilder create() {
        return new ConfigBuilder();
    }

    ConfigBuilder backend(String name, URI url, String... models) {
        backends.add(backendConfig(name, url, 1, null, null, true, false, models));
        return this;
    }

    ConfigBuilder backend(BackendConfig b) {
        backends.add(b);
        return this;
    }

    static BackendConfig backendConfig(String name, URI url, int weight, @Nullable String apiKey,
                                       @Nullable Duration timeout, boolean enabled, boolean internal,
                                       String... models) {
        return new BackendConfig(name, BackendType.OPENAI, url, List.of(models), BackendRole.UNIFIED, weight,
                apiKey == null ? null : Secret.of(apiKey), timeout, enabled, internal);
    }

    static ApiKeyConfig key(String id, String value, List<String> allowedBackends, List<String> allowedModels,
                            @Nullable RateLimit rateLimit, boolean enabled, @Nullable Instant expiresAt) {
        return new ApiKeyConfig(Secret.of(value), id, null, null, null, List.of(), allowedBackends, allowedModels,
                rateLimit, enabled, expiresAt);
    }

    static ApiKeyConfig key(String id, String value) {
        return key(id, value, List.of(), List.of(), null, true, null);
    }

    ConfigBuilder health(Duration interval, int unhealthy, int healthy) {
        health = new HealthCheckConfig(true, interval, Duration.ofMillis(500), unhealthy, healthy, "/v1/models",
                interval, Duration.ofSeconds(300));
        return this;
    }

    /** Disaggregated serving on (the dispatch hook is asked), with or without unified fallback. */
    ConfigBuilder disaggregated(boolean fallbackToUnified) {
        disaggregated = new DisaggregatedServingConfig(true, fallbackToUnified);
        return this;
    }

    ConfigBuilder noRetry() {
        retry = new RetryConfig(false, 1, 0.2, 10, Duration.ZERO);
        return this;
    }

    ServerConfig serverConfig() {
        return new ServerConfig(binds, socketMode, 2, poolSize, maxBody, maxHeader, maxLine, requestTimeout,
                connectTimeout, headerReadTimeout, idleTimeout, shutdownGrace, bodyReadTimeout, maxBuffered,
                maxConnections, shutdownQuietPeriod);
    }

    ConfigBuilder globalPrompts(GlobalPromptsConfig g) {
        globalPrompts = g;
        return this;
    }

    RouterConfig build() {
        RouterConfig d = RouterConfig.defaults();
        return new RouterConfig(serverConfig(), backends, strategy, health, breaker, retry, rateLimiting, apiKeys,
                d.admin(), disaggregated, d.logging(), d.metrics(), d.dynamo(), d.timeouts(), d.fallback(), null,
                globalPrompts, null);
    }
}
