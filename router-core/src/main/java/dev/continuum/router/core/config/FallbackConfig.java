package dev.continuum.router.core.config;

import java.util.List;
import java.util.Map;

/**
 * {@code fallback}: when every backend of a model failed a request before anything reached the client, the
 * request is tried on the model's fallback models in order (the body's {@code model} rewritten to each).
 *
 * @param enabled        false keeps the chains in the config but never follows them
 * @param fallbackChains model id to its fallback model ids, tried in order; a chain never loops back
 * @param fallbackPolicy what triggers a fallback and how many fallback models one request may try
 */
public record FallbackConfig(boolean enabled, Map<String, List<String>> fallbackChains, Policy fallbackPolicy) {

    public FallbackConfig {
        fallbackChains = Map.copyOf(fallbackChains);
    }

    /** @param maxFallbackAttempts fallback models tried per request, at most (1..16) */
    public record Policy(Triggers triggerConditions, int maxFallbackAttempts) {
    }

    /**
     * Which failures of the primary model move on to its fallback.
     *
     * @param errorCodes         upstream status codes (the final answer of the model's own retries)
     * @param timeout            the upstream did not answer within its timeout (504)
     * @param connectionError    no backend could be connected to, or one closed before answering
     * @param modelNotFound      no enabled backend serves the model (otherwise 404)
     * @param circuitBreakerOpen no backend of the model is available (breakers open, health down)
     */
    public record Triggers(List<Integer> errorCodes, boolean timeout, boolean connectionError, boolean modelNotFound,
                           boolean circuitBreakerOpen) {
        public Triggers {
            errorCodes = List.copyOf(errorCodes);
        }
    }

    public static final List<Integer> DEFAULT_ERROR_CODES = List.of(429, 500, 502, 503, 504);

    public static FallbackConfig defaults() {
        return new FallbackConfig(false, Map.of(),
                new Policy(new Triggers(DEFAULT_ERROR_CODES, true, true, false, true), 3));
    }

    /** The chain of {@code model}, empty when it has none or fallback is off. */
    public List<String> chain(String model) {
        if (!enabled) {
            return List.of();
        }
        List<String> c = fallbackChains.get(model);
        return c == null ? List.of() : c;
    }
}
