package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One entry of {@code backends}: an OpenAI-wire upstream.
 *
 * @param name     unique, {@code [A-Za-z0-9._-]{1,64}}; used as a metric label, so it is bounded
 * @param url      {@code http} or {@code https} base URL without query or fragment; paths are appended
 * @param models   model ids served; empty means "any model" (the backend is asked with GET /v1/models)
 * @param weight   1..1000, used by {@code WeightedRoundRobin}
 * @param apiKey   sent upstream as {@code Authorization: Bearer}, replacing the client's header
 * @param timeout  overrides {@code server.request_timeout}
 * @param enabled  disabled backends are kept in config but never chosen
 * @param internal internal backends are never chosen for a client's model and not listed in /v1/models;
 *                 only internal dispatch (for example the Dynamo shim path) sends to them
 * @param responsesApi {@code responses_api}: whether {@code /v1/responses} requests are converted to chat
 *                 completions for this backend or passed through to its own Responses API
 * @param healthCheck {@code health_check}: this backend's probe settings (the global {@code health_checks}
 *                 with the keys written here replaced), or null to use the global ones
 * @param requiresSingleLeadingSystem {@code requires_single_leading_system}: chat bodies sent here get their
 *                 system messages merged into one leading system message (for chat templates that refuse any
 *                 other shape); left out of the readback when false
 */
public record BackendConfig(
        String name,
        BackendType type,
        URI url,
        List<String> models,
        BackendRole role,
        int weight,
        @Nullable Secret apiKey,
        @Nullable Duration timeout,
        boolean enabled,
        boolean internal,
        ResponsesApi responsesApi,
        @Nullable HealthCheckConfig healthCheck,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean requiresSingleLeadingSystem) {

    public BackendConfig {
        models = List.copyOf(models);
    }

    /** A backend with {@code /v1/responses} converted that takes chat bodies as they are. */
    public BackendConfig(String name, BackendType type, URI url, List<String> models, BackendRole role, int weight,
                         @Nullable Secret apiKey, @Nullable Duration timeout, boolean enabled, boolean internal,
                         @Nullable HealthCheckConfig healthCheck) {
        this(name, type, url, models, role, weight, apiKey, timeout, enabled, internal, ResponsesApi.CONVERTED,
                healthCheck, false);
    }

    /** A backend that takes chat bodies as they are. */
    public BackendConfig(String name, BackendType type, URI url, List<String> models, BackendRole role, int weight,
                         @Nullable Secret apiKey, @Nullable Duration timeout, boolean enabled, boolean internal,
                         ResponsesApi responsesApi, @Nullable HealthCheckConfig healthCheck) {
        this(name, type, url, models, role, weight, apiKey, timeout, enabled, internal, responsesApi, healthCheck,
                false);
    }

    /** A backend with {@code /v1/responses} converted. */
    public BackendConfig(String name, BackendType type, URI url, List<String> models, BackendRole role, int weight,
                         @Nullable Secret apiKey, @Nullable Duration timeout, boolean enabled, boolean internal,
                         @Nullable HealthCheckConfig healthCheck, boolean requiresSingleLeadingSystem) {
        this(name, type, url, models, role, weight, apiKey, timeout, enabled, internal, ResponsesApi.CONVERTED,
                healthCheck, requiresSingleLeadingSystem);
    }

    /** A backend probed with the global {@code health_checks}. */
    public BackendConfig(String name, BackendType type, URI url, List<String> models, BackendRole role, int weight,
                         @Nullable Secret apiKey, @Nullable Duration timeout, boolean enabled, boolean internal) {
        this(name, type, url, models, role, weight, apiKey, timeout, enabled, internal, ResponsesApi.CONVERTED, null,
                false);
    }

    /** Whether {@code /v1/responses} requests go to this backend unconverted. */
    public boolean servesResponsesNatively() {
        return responsesApi == ResponsesApi.NATIVE;
    }

    /** The probe settings of this backend: its own {@code health_check}, else {@code global}. */
    public HealthCheckConfig effectiveHealthCheck(HealthCheckConfig global) {
        return healthCheck != null ? healthCheck : global;
    }

    /** The backend serves {@code model} (a backend with no model list serves every model). */
    public boolean serves(String model) {
        return models.isEmpty() || models.contains(model);
    }

    public Duration effectiveTimeout(ServerConfig server) {
        return timeout != null ? timeout : server.requestTimeout();
    }
}
