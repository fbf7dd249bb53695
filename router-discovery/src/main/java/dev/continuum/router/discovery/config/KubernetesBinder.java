package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.discovery.DiscoverySourceKind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** {@code dynamo.discovery.kubernetes}: read by the {@code kubernetes} and {@code kubernetes_pods} sources. */
final class KubernetesBinder {
    static final String LABEL_VALUE_RULE = "a Kubernetes label value: 1 to 63 letters, digits, '-', '_' or '.', "
            + "starting and ending with a letter or digit";

    private KubernetesBinder() {
    }


    /**
     * The rules apply whenever the section is written; the ones that only make sense for the active source
     * (a namespace is required, exactly one of model/models for Pods) only when a Kubernetes source is chosen,
     * so a config can carry an inactive section while another source runs.
     */
    static KubernetesConfig bind(ConfigNode k8s, DiscoverySourceKind source) {
        KubernetesConfig defaults = KubernetesConfig.defaults();
        boolean active = source == DiscoverySourceKind.KUBERNETES || source == DiscoverySourceKind.KUBERNETES_PODS;
        if (k8s.isPresent() && k8s.kind() != ConfigNode.Kind.MAP) {
            k8s.invalid("a map with namespace, dynamo_namespace, model or models and watch_reconnect_backoff");
            return defaults;
        }
        ConfigNode namespaceNode = k8s.get("namespace");
        String namespace = namespaceNode.asStringOrNull();
        if (namespace == null) {
            if (active && !namespaceNode.isPresent()) {
                namespaceNode.error("missing (expected: the fleet's Kubernetes namespace, a DNS-1123 label)");
            }
            namespace = KubernetesConfig.DEFAULT_NAMESPACE;
        } else if (!KubernetesConfig.dns1123Label(namespace)) {
            namespaceNode.invalid("a DNS-1123 label: 1 to 63 lowercase letters, digits or '-', starting and ending "
                    + "with a letter or digit");
        }

        NamespaceList namespaces = NamespaceList.bind(k8s, "dynamo_namespace", "dynamo_namespaces",
                KubernetesConfig::labelValue, LABEL_VALUE_RULE);
        List<String> effective = namespaces.effective();

        ConfigNode modelNode = k8s.get("model");
        String model = modelNode.asStringOrNull();
        if (model != null && !modelName(model)) {
            modelNode.invalid("a non-empty model name without whitespace");
            model = null;
        }
        ConfigNode modelsNode = k8s.get("models");
        List<KubernetesConfig.ModelMapping> models = bindModels(modelsNode, effective);
        boolean modelGiven = modelNode.kind() != ConfigNode.Kind.MISSING;
        boolean modelsGiven = modelsNode.kind() != ConfigNode.Kind.MISSING;
        if (source == DiscoverySourceKind.KUBERNETES && (modelGiven || modelsGiven)) {
            (modelGiven ? modelNode : modelsNode).warning("ignored under source: kubernetes (each worker's model "
                    + "comes from its model card)");
        } else if (source == DiscoverySourceKind.KUBERNETES_PODS) {
            if (modelGiven && modelsGiven) {
                modelsNode.error("set together with model (expected: exactly one of model or models)");
            } else if (!modelGiven && !modelsGiven) {
                modelNode.error("missing (expected: exactly one of model or models with source: kubernetes_pods)");
            }
        }
        if (source == DiscoverySourceKind.KUBERNETES) {
            // Ignored, and kept out of the value so editing them neither restarts nor empties anything.
            model = null;
            models = List.of();
        }
        BackoffConfig backoff = BackoffBinder.bind(k8s.get("watch_reconnect_backoff"));
        return new KubernetesConfig(namespace, namespaces.one(), namespaces.several(), model, models, backoff);
    }

    private static List<KubernetesConfig.ModelMapping> bindModels(ConfigNode modelsNode,
                                                                  List<String> dynamoNamespaces) {
        List<KubernetesConfig.ModelMapping> models = new ArrayList<>();
        if (modelsNode.kind() == ConfigNode.Kind.MISSING) {
            return models;
        }
        List<ConfigNode> entries = modelsNode.elements();
        if (modelsNode.kind() == ConfigNode.Kind.NULL || (modelsNode.kind() == ConfigNode.Kind.LIST && entries.isEmpty())) {
            modelsNode.error("empty (expected: 1 to " + KubernetesConfig.MAX_MODEL_MAPPINGS + " entries)");
            return models;
        }
        if (entries.size() > KubernetesConfig.MAX_MODEL_MAPPINGS) {
            modelsNode.error(entries.size() + " entries (expected: at most " + KubernetesConfig.MAX_MODEL_MAPPINGS + ")");
        }
        boolean several = dynamoNamespaces.size() > 1;
        Set<String> seen = new HashSet<>();
        for (ConfigNode entry : entries) {
            if (entry.kind() != ConfigNode.Kind.MAP) {
                entry.invalid("a map with component and model");
                continue;
            }
            ConfigNode componentNode = entry.get("component");
            String component = componentNode.asStringOrNull();
            ConfigNode modelNode = entry.get("model");
            String model = modelNode.asStringOrNull();
            boolean valid = required(componentNode, component, KubernetesConfig::labelValue,
                    "an nvidia.com/dynamo-component label value");
            valid &= required(modelNode, model, KubernetesBinder::modelName, "a non-empty model name without whitespace");
            ConfigNode nsNode = entry.get("dynamo_namespace");
            String ns = nsNode.asStringOrNull();
            if (ns == null && several) {
                nsNode.error("missing (expected: one of dynamo_namespaces " + dynamoNamespaces
                        + " when several are watched)");
                valid = false;
            } else if (ns != null && !dynamoNamespaces.contains(ns)) {
                nsNode.invalid("one of the watched Dynamo namespaces " + dynamoNamespaces);
                valid = false;
            }
            if (!valid || component == null || model == null) {
                continue;
            }
            String identity = (ns == null ? dynamoNamespaces.get(0) : ns) + "/" + component;
            if (!seen.add(identity)) {
                componentNode.invalid("unique components" + (several ? " per Dynamo namespace" : ""));
                continue;
            }
            models.add(new KubernetesConfig.ModelMapping(ns, component, model));
        }
        return models;
    }

    static boolean modelName(String model) {
        return !model.isEmpty() && model.chars().noneMatch(Character::isWhitespace);
    }

    /** Reports a required string that is missing or breaks its rule; returns whether it is valid. */
    private static boolean required(ConfigNode node, @Nullable String value, Predicate<String> rule,
                                    String expectation) {
        if (value != null && rule.test(value)) {
            return true;
        }
        if (!node.isPresent()) {
            node.error("missing (expected: " + expectation + ")");
        } else {
            node.invalid(expectation);
        }
        return false;
    }
}
