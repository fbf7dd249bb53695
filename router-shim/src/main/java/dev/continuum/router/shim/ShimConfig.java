package dev.continuum.router.shim;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.continuum.router.core.config.FrontendDisaggregation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.shim}: which configured backends are direct-mode shim replicas, per Dynamo namespace, and how
 * client model IDs map to the workers' served names.
 *
 * @param backends shim replicas when one namespace is watched (empty when {@code pools} is used)
 * @param pools    one pool per watched namespace; required with several namespaces
 * @param modelMap client model ID to the workers' {@code display_name}, for candidate matching only
 */
public record ShimConfig(
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> backends,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Pool> pools,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> modelMap) implements FrontendDisaggregation {
    /** The cap on listed shim backends (docs/decisions.md). */
    public static final int MAX_BACKENDS = 64;
    /** The cap on {@code model_map} entries (docs/decisions.md). */
    public static final int MAX_MODEL_MAP_ENTRIES = 1024;

    public static final ShimConfig DEFAULTS = new ShimConfig(List.of(), List.of(), Map.of());

    public ShimConfig {
        backends = List.copyOf(backends);
        pools = List.copyOf(pools);
        modelMap = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(modelMap));
    }

    /** One namespace's shim replicas: a pinned instance ID resolves only in its own graph's frontend. */
    public record Pool(String namespace, List<String> backends) {
        public Pool {
            Objects.requireNonNull(namespace, "namespace");
            backends = List.copyOf(backends);
        }
    }

    /** Whether any shim replica is configured. */
    public boolean configured() {
        return !backends.isEmpty() || !pools.isEmpty();
    }

    /**
     * Namespace to shim replicas, in configuration order. With {@code backends}, they serve the single
     * watched namespace ({@code namespaces.get(0)}).
     */
    public Map<String, List<String>> poolsByNamespace(List<String> namespaces) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (!pools.isEmpty()) {
            for (Pool p : pools) {
                out.put(p.namespace(), p.backends());
            }
        } else if (!backends.isEmpty() && !namespaces.isEmpty()) {
            out.put(namespaces.get(0), backends);
        }
        return out;
    }

    /** The worker model name for a client model ID (the ID itself when unmapped). */
    public String workerModel(String clientModel) {
        String mapped = modelMap.get(clientModel);
        return mapped == null ? clientModel : mapped;
    }

    /** The namespace whose pool lists {@code backend}, or null. */
    public @Nullable String namespaceOf(String backend, List<String> namespaces) {
        for (Map.Entry<String, List<String>> e : poolsByNamespace(namespaces).entrySet()) {
            if (e.getValue().contains(backend)) {
                return e.getKey();
            }
        }
        return null;
    }
}
