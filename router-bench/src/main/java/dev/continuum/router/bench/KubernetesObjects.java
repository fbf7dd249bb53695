package dev.continuum.router.bench;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.kubernetes.PodNameHash;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Kubernetes objects {@link KubernetesBenchmark} puts into fabric8's mock server, as the Dynamo operator
 * and the workers write them (docs/discovery.md): operator-labelled worker Pods, DynamoWorkerMetadata
 * resources holding one worker's etcd records, and EndpointSlices naming ready Pods. The labels and the
 * resource's group, version and kind are the operator's wire names, spelled out here because the
 * discovery module keeps its constants package-private.
 */
final class KubernetesObjects {
    /** The Kubernetes namespace every object is created in. */
    static final String NS = "dynamo";
    /** The Dynamo namespace the Pods' labels name. */
    static final String POD_DYNAMO_NS = "dynamo-solar-pro4";
    /** The Dynamo namespace of the metadata resources' records. */
    static final String METADATA_DYNAMO_NS = "dynamo";
    static final String KIND = "DynamoWorkerMetadata";
    static final ResourceDefinitionContext METADATA = new ResourceDefinitionContext.Builder().withGroup("nvidia.com")
            .withVersion("v1alpha1").withKind(KIND).withPlural("dynamoworkermetadatas").withNamespaced(true).build();

    private static final String BACKEND_LABEL = "nvidia.com/dynamo-discovery-backend";
    private static final String ENABLED_LABEL = "nvidia.com/dynamo-discovery-enabled";
    private static final String NAMESPACE_LABEL = "nvidia.com/dynamo-namespace";
    private static final String COMPONENT_LABEL = "nvidia.com/dynamo-component";
    private static final String COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private KubernetesObjects() {
    }

    /** A ready, running decode worker Pod of component {@code component}, labelled for discovery. */
    static Pod decodeWorker(String name, String component) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(BACKEND_LABEL, "kubernetes");
        labels.put(ENABLED_LABEL, "true");
        labels.put(NAMESPACE_LABEL, POD_DYNAMO_NS);
        labels.put(COMPONENT_TYPE_LABEL, "decode");
        labels.put(COMPONENT_LABEL, component);
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).withLabels(labels).endMetadata()
                .withNewStatus().withPhase("Running")
                .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .endStatus()
                .build();
    }

    /** The DynamoWorkerMetadata resource of {@code pod}: its endpoint, model card and kv_metrics channel. */
    static GenericKubernetesResource metadata(String pod) {
        long id = PodNameHash.hashPodName(pod);
        String component = pod.contains("prefill") ? "prefill" : "decode";
        String ns = METADATA_DYNAMO_NS;
        long publisher = id ^ 0x5a5a;
        Map<String, Object> endpoints = Map.of(
                strip(endpointKey(ns, component, "generate", id), "v1/instances/"),
                json(endpoint(ns, component, "generate", id)));
        Map<String, Object> cards = Map.of(
                strip(cardKey(ns, component, "generate", id), "v1/mdc/"),
                json(model(ns, component, "generate", id, card("Qwen/Qwen3-32B",
                        component.equals("prefill") ? "Prefill" : "Decode"))));
        Map<String, Object> channels = Map.of(
                strip(channelKey(ns, component, "generate", "kv_metrics", publisher), "v1/event_channels/"),
                json(channel(ns, component, "generate", "kv_metrics", publisher, "tcp://10.0.0.9:41000")));
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("endpoints", endpoints);
        data.put("model_cards", cards);
        data.put("event_channels", channels);
        data.put("event_sources", null); // the field as the workers write it when they have no event sources
        return new GenericKubernetesResourceBuilder().withApiVersion("nvidia.com/v1alpha1").withKind(KIND)
                .withNewMetadata().withName(pod).withNamespace(NS)
                .addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(pod).withUid("uid-" + pod)
                .withController(true).endOwnerReference().endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("data", data))).build();
    }

    /** An EndpointSlice naming each Pod of {@code readiness} with its readiness. */
    static EndpointSlice slice(String name, Map<String, Boolean> readiness) {
        EndpointSliceBuilder builder = new EndpointSliceBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .addToLabels(BACKEND_LABEL, "kubernetes").addToLabels(ENABLED_LABEL, "true")
                .endMetadata().withAddressType("IPv4");
        int i = 1;
        for (Map.Entry<String, Boolean> e : readiness.entrySet()) {
            builder.addNewEndpoint().withAddresses("10.0.1." + i++).withNewConditions().withReady(e.getValue())
                    .endConditions().withNewTargetRef().withKind("Pod").withName(e.getKey()).endTargetRef()
                    .endEndpoint();
        }
        return builder.build();
    }

    private static String strip(String key, String prefix) {
        if (!key.startsWith(prefix)) {
            throw new IllegalStateException(key + " does not start with " + prefix);
        }
        return key.substring(prefix.length());
    }

    private static Object json(String text) {
        try {
            return MAPPER.readValue(text, Map.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
