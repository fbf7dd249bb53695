package dev.continuum.router.discovery.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.continuum.router.discovery.DynamoSnapshot;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.discovery.kubernetes}: the fleet's Kubernetes namespace and Dynamo namespaces, for both Kubernetes
 * sources, and (for {@code kubernetes_pods} only, whose Pods carry no model cards) the served model.
 *
 * @param namespace             the Kubernetes namespace of the fleet's objects (a DNS-1123 label)
 * @param dynamoNamespace       the workers' {@code nvidia.com/dynamo-namespace} label value ({@code DYN_NAMESPACE})
 * @param dynamoNamespaces      several Dynamo namespaces instead of one; empty when {@code dynamoNamespace} is used
 * @param model                 the one served model of every Pod, or null when {@code models} maps components
 * @param models                per-component models; empty when {@code model} is used
 * @param watchReconnectBackoff the shared backoff between passes
 */
public record KubernetesConfig(
        String namespace,
        String dynamoNamespace,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> dynamoNamespaces,
        @Nullable String model,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ModelMapping> models,
        BackoffConfig watchReconnectBackoff) {

    /** The default Kubernetes namespace when the section leaves it out (only valid for inactive sections). */
    public static final String DEFAULT_NAMESPACE = "default";
    /** At most this many {@code models} entries (docs/decisions.md). */
    public static final int MAX_MODEL_MAPPINGS = 256;

    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

    /**
     * One {@code models} entry: Pods whose {@code nvidia.com/dynamo-component} label equals {@code component}
     * (exactly, case-sensitive) serve {@code model}.
     *
     * @param dynamoNamespace the Dynamo namespace the entry applies to; null means the only one watched
     */
    public record ModelMapping(@Nullable String dynamoNamespace, String component, String model) {
        public ModelMapping {
            Objects.requireNonNull(component, "component");
            Objects.requireNonNull(model, "model");
        }
    }

    public KubernetesConfig {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(dynamoNamespace, "dynamoNamespace");
        dynamoNamespaces = List.copyOf(dynamoNamespaces);
        models = List.copyOf(models);
        Objects.requireNonNull(watchReconnectBackoff, "watchReconnectBackoff");
    }

    public static KubernetesConfig defaults() {
        return new KubernetesConfig(DEFAULT_NAMESPACE, DynamoSnapshot.DEFAULT_NAMESPACE, List.of(), null, List.of(),
                BackoffConfig.defaults());
    }

    public List<String> effectiveDynamoNamespaces() {
        return dynamoNamespaces.isEmpty() ? List.of(dynamoNamespace) : dynamoNamespaces;
    }

    /**
     * The model a ready worker Pod serves, or null when its component is not mapped (the Pod is held without
     * being published).
     */
    public @Nullable String modelFor(String dynamoNamespace, @Nullable String component) {
        if (model != null) {
            return model;
        }
        if (component == null) {
            return null;
        }
        for (ModelMapping mapping : models) {
            if (mapping.component().equals(component)
                    && (mapping.dynamoNamespace() == null || mapping.dynamoNamespace().equals(dynamoNamespace))) {
                return mapping.model();
            }
        }
        return null;
    }

    public KubernetesConfig withNamespace(String newNamespace) {
        return new KubernetesConfig(newNamespace, dynamoNamespace, dynamoNamespaces, model, models,
                watchReconnectBackoff);
    }

    public KubernetesConfig withDynamoNamespaces(String one, List<String> several) {
        return new KubernetesConfig(namespace, one, several, model, models, watchReconnectBackoff);
    }

    public KubernetesConfig withModel(@Nullable String newModel, List<ModelMapping> newModels) {
        return new KubernetesConfig(namespace, dynamoNamespace, dynamoNamespaces, newModel, newModels,
                watchReconnectBackoff);
    }

    public KubernetesConfig withBackoff(BackoffConfig backoff) {
        return new KubernetesConfig(namespace, dynamoNamespace, dynamoNamespaces, model, models, backoff);
    }

    /** A Kubernetes namespace name: lowercase alphanumerics and '-', 1..63 characters, alphanumeric at both ends. */
    static boolean dns1123Label(String name) {
        return name.length() <= 63 && DNS_1123_LABEL.matcher(name).matches();
    }

    /** A Kubernetes label value, non-empty: 1..63 of alphanumerics, '-', '_', '.', alphanumeric at both ends. */
    static boolean labelValue(String value) {
        return !value.isEmpty() && value.length() <= 63 && LABEL_VALUE.matcher(value).matches();
    }
}
