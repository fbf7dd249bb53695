package dev.continuum.router.discovery.kubernetes;

import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.discovery.config.KubernetesConfig;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What one Pod means for the fleet, by docs/discovery.md: membership (the list's label selector), role from
 * {@code nvidia.com/dynamo-component-type} / {@code sub-component-type}, readiness, model by exact component.
 * Pure: the source keeps the outcome per Pod name and only the Pods an event touched are classified again.
 */
final class PodClassifier {
    static final String BACKEND_LABEL = "nvidia.com/dynamo-discovery-backend";
    static final String ENABLED_LABEL = "nvidia.com/dynamo-discovery-enabled";
    static final String NAMESPACE_LABEL = "nvidia.com/dynamo-namespace";
    static final String COMPONENT_LABEL = "nvidia.com/dynamo-component";
    static final String COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type";
    static final String SUB_COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-sub-component-type";
    static final String DISCOVERY_MODE_ANNOTATION = "nvidia.com/dynamo-kube-discovery-mode";

    private PodClassifier() {
    }

    /** The outcome for one Pod. */
    sealed interface PodClass {
    }

    /** Not a worker (frontend, planner, epp, default), or outside the watched Dynamo namespaces: ignored. */
    record Ignored(String reason) implements PodClass {
    }

    /** A worker Pod that is not (or no longer) ready: nothing published. */
    record NotReady() implements PodClass {
    }

    /** Container-mode discovery: this source supports pod mode only; refused and counted once. */
    record Refused(String reason) implements PodClass {
    }

    /** Ready, but no model is configured for its component: held without publishing (logged once at debug). */
    record Held(String dynamoNamespace, @Nullable String component) implements PodClass {
    }

    /** A ready worker with its model: published unless another ready Pod hashes to the same ID. */
    record Ready(String dynamoNamespace, long instanceId, String component, WorkerRole role, String model)
            implements PodClass {
    }

    /** The label selector for the list and the watch. */
    static String labelSelector(KubernetesConfig config) {
        var namespaces = config.effectiveDynamoNamespaces();
        String ns = namespaces.size() == 1 ? NAMESPACE_LABEL + "=" + namespaces.get(0)
                : NAMESPACE_LABEL + " in (" + String.join(",", namespaces) + ")";
        return BACKEND_LABEL + "=kubernetes," + ENABLED_LABEL + "=true," + ns;
    }

    static PodClass classify(Pod pod, KubernetesConfig config) {
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        String dynamoNamespace = labels.get(NAMESPACE_LABEL);
        // The selector already filters; a server (or mock) that ignores part of it must not widen the fleet.
        if (!"kubernetes".equals(labels.get(BACKEND_LABEL)) || !"true".equals(labels.get(ENABLED_LABEL))
                || dynamoNamespace == null || !config.effectiveDynamoNamespaces().contains(dynamoNamespace)) {
            return new Ignored("outside the label selector");
        }
        WorkerRole role = role(labels.get(COMPONENT_TYPE_LABEL), labels.get(SUB_COMPONENT_TYPE_LABEL));
        if (role == null) {
            return new Ignored("component type " + labels.get(COMPONENT_TYPE_LABEL) + " is not a worker");
        }
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        if (annotations != null && "container".equalsIgnoreCase(annotations.get(DISCOVERY_MODE_ANNOTATION))) {
            return new Refused("container discovery mode (only pod mode is supported)");
        }
        if (!ready(pod)) {
            return new NotReady();
        }
        String component = labels.get(COMPONENT_LABEL);
        String model = config.modelFor(dynamoNamespace, component);
        if (model == null) {
            return new Held(dynamoNamespace, component);
        }
        String name = pod.getMetadata().getName();
        String shown = component == null || component.isEmpty() ? labels.get(COMPONENT_TYPE_LABEL) : component;
        return new Ready(dynamoNamespace, PodNameHash.hashPodName(name), shown == null ? "" : shown, role, model);
    }

    /**
     * {@code prefill}/{@code decode} directly, or through the sub-component type of a {@code worker};
     * any other worker is aggregated. Null for non-worker types.
     */
    static @Nullable WorkerRole role(@Nullable String componentType, @Nullable String subComponentType) {
        String type = componentType == null ? "" : componentType.toLowerCase(Locale.ROOT);
        return switch (type) {
            case "prefill" -> WorkerRole.PREFILL;
            case "decode" -> WorkerRole.DECODE;
            case "worker" -> {
                String sub = subComponentType == null ? "" : subComponentType.toLowerCase(Locale.ROOT);
                yield switch (sub) {
                    case "prefill" -> WorkerRole.PREFILL;
                    case "decode" -> WorkerRole.DECODE;
                    default -> WorkerRole.AGGREGATED;
                };
            }
            default -> null;
        };
    }

    /** Running, condition Ready=True, and not being deleted. */
    static boolean ready(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null || pod.getStatus() == null
                || !"Running".equals(pod.getStatus().getPhase()) || pod.getStatus().getConditions() == null) {
            return false;
        }
        for (PodCondition condition : pod.getStatus().getConditions()) {
            if ("Ready".equals(condition.getType())) {
                return "True".equals(condition.getStatus());
            }
        }
        return false;
    }
}
