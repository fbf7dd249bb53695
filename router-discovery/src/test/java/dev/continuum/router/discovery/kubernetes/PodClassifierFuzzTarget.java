package dev.continuum.router.discovery.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Coverage-guided fuzzing of the Pod classifier (docs/testing.md, "Fuzzing"): Pods with fuzzed labels,
 * annotations, phase, conditions and deletion state, each label drawn from the values that matter or from
 * fuzzed text.
 *
 * <p>The contract checked: no Pod throws; a Pod is published ({@code Ready}) only when it carries every
 * selector label of a watched Dynamo namespace, is running with condition Ready=True and not being deleted,
 * is not in container mode, and has a worker role and a model; its ID is always {@code hash_pod_name} of its
 * name.
 */
class PodClassifierFuzzTarget {
    private static final KubernetesConfig CONFIG = new KubernetesConfig("ns", "dynamo", List.of("dynamo", "b"),
            null, List.of(new KubernetesConfig.ModelMapping(null, "vllm-worker", "m"),
                    new KubernetesConfig.ModelMapping("b", "other", "n")), BackoffConfig.defaults());

    @FuzzTest(maxDuration = "10s")
    void onlyReadyLabelledWorkersWithAModelArePublished(FuzzedDataProvider data) {
        Map<String, String> labels = new LinkedHashMap<>();
        label(data, labels, PodClassifier.BACKEND_LABEL, "kubernetes", "Kubernetes");
        label(data, labels, PodClassifier.ENABLED_LABEL, "true", "True");
        label(data, labels, PodClassifier.NAMESPACE_LABEL, "dynamo", "b");
        label(data, labels, PodClassifier.COMPONENT_TYPE_LABEL, "worker", "Decode");
        label(data, labels, PodClassifier.SUB_COMPONENT_TYPE_LABEL, "prefill", "PREFILL");
        label(data, labels, PodClassifier.COMPONENT_LABEL, "vllm-worker", "other");
        Map<String, String> annotations = new LinkedHashMap<>();
        label(data, annotations, PodClassifier.DISCOVERY_MODE_ANNOTATION, "container", "pod");
        String name = data.consumeString(64);
        PodBuilder builder = new PodBuilder().withNewMetadata().withName(name).withNamespace("ns")
                .withLabels(labels).withAnnotations(data.consumeBoolean() ? annotations : null)
                .withDeletionTimestamp(data.consumeBoolean() ? null : "2026-01-01T00:00:00Z").endMetadata();
        if (data.consumeBoolean()) {
            var status = builder.withNewStatus().withPhase(data.pickValue(new String[] {"Running", "Pending", ""}));
            int conditions = data.consumeInt(0, 3);
            for (int i = 0; i < conditions; i++) {
                status.addNewCondition().withType(data.pickValue(new String[] {"Ready", "ContainersReady", "ready"}))
                        .withStatus(data.pickValue(new String[] {"True", "False", "true", "Unknown"})).endCondition();
            }
            status.endStatus();
        }
        Pod pod = builder.build();

        PodClassifier.PodClass outcome = PodClassifier.classify(pod, CONFIG);

        assertThat(outcome).isNotNull();
        if (outcome instanceof PodClassifier.Ready ready) {
            assertThat(labels).containsEntry(PodClassifier.BACKEND_LABEL, "kubernetes")
                    .containsEntry(PodClassifier.ENABLED_LABEL, "true");
            assertThat(CONFIG.effectiveDynamoNamespaces()).contains(labels.get(PodClassifier.NAMESPACE_LABEL));
            assertThat(ready.dynamoNamespace()).isEqualTo(labels.get(PodClassifier.NAMESPACE_LABEL));
            assertThat(PodClassifier.ready(pod)).isTrue();
            assertThat(pod.getMetadata().getDeletionTimestamp()).isNull();
            assertThat(annotations.getOrDefault(PodClassifier.DISCOVERY_MODE_ANNOTATION, "pod")
                    .equalsIgnoreCase("container") && pod.getMetadata().getAnnotations() != null).isFalse();
            assertThat(ready.role()).isEqualTo(PodClassifier.role(labels.get(PodClassifier.COMPONENT_TYPE_LABEL),
                    labels.get(PodClassifier.SUB_COMPONENT_TYPE_LABEL)));
            assertThat(ready.model()).isEqualTo(CONFIG.modelFor(ready.dynamoNamespace(),
                    labels.get(PodClassifier.COMPONENT_LABEL)));
            assertThat(ready.instanceId()).isEqualTo(PodNameHash.hashPodName(name));
        } else if (outcome instanceof PodClassifier.Held held) {
            assertThat(CONFIG.modelFor(held.dynamoNamespace(), held.component())).isNull();
        }
    }

    /** Absent, one of the two meaningful values, or fuzzed text. */
    private static void label(FuzzedDataProvider data, Map<String, String> into, String key, String a, String b) {
        switch (data.consumeInt(0, 3)) {
            case 0 -> { }
            case 1 -> into.put(key, a);
            case 2 -> into.put(key, b);
            default -> into.put(key, data.consumeString(24));
        }
    }
}
