package dev.continuum.router.discovery.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Operator-labelled Pods as the Dynamo operator creates them (labels from seed 000's "Kubernetes Pod source"). */
final class Pods {
    static final String NS = "dynamo";
    static final String DYN_NS = "dynamo-solar-pro4";

    private Pods() {
    }

    static Pod worker(String name, String componentType, @Nullable String subType, @Nullable String component,
                      boolean ready) {
        return pod(name, DYN_NS, componentType, subType, component, ready, Map.of());
    }

    static Pod pod(String name, String dynamoNamespace, String componentType, @Nullable String subType,
                   @Nullable String component, boolean ready, Map<String, String> annotations) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(PodClassifier.BACKEND_LABEL, "kubernetes");
        labels.put(PodClassifier.ENABLED_LABEL, "true");
        labels.put(PodClassifier.NAMESPACE_LABEL, dynamoNamespace);
        labels.put(PodClassifier.COMPONENT_TYPE_LABEL, componentType);
        if (subType != null) {
            labels.put(PodClassifier.SUB_COMPONENT_TYPE_LABEL, subType);
        }
        if (component != null) {
            labels.put(PodClassifier.COMPONENT_LABEL, component);
        }
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).withLabels(labels).withAnnotations(annotations)
                .endMetadata()
                .withNewStatus().withPhase("Running")
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .endStatus()
                .build();
    }

    static Pod withReady(Pod pod, boolean ready) {
        return new PodBuilder(pod).editStatus().editFirstCondition().withStatus(ready ? "True" : "False")
                .endCondition().endStatus().build();
    }

    static Pod withLabel(Pod pod, String key, String value) {
        return new PodBuilder(pod).editMetadata().addToLabels(key, value).endMetadata().build();
    }
}
