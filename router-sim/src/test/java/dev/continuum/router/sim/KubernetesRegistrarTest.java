package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The fleet as Kubernetes objects in fabric8's CRUD mock API server, read back with a plain client. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KubernetesRegistrarTest {
    private static final String NS = "dynamo-system";
    private static final String SELECTOR = "nvidia.com/dynamo-discovery-backend=kubernetes,"
            + "nvidia.com/dynamo-discovery-enabled=true";

    @TempDir
    Path root;

    private KubernetesMockServer server;
    private KubernetesClient admin;
    private SimFleet fleet;

    @BeforeEach
    void startServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init();
        server.expectCustomResource(new CustomResourceDefinitionContext.Builder().withGroup("nvidia.com")
                .withVersion("v1alpha1").withKind("DynamoWorkerMetadata").withPlural("dynamoworkermetadatas")
                .withScope("Namespaced").build());
        admin = server.createClient();
    }

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
        admin.close();
        server.destroy();
    }

    private void start(Store.KubernetesObjects objects) throws Exception {
        fleet = SimFleet.start(SimFleet.Options.defaults(root, "unused")
                .withStore(new Store.Kubernetes(NS, objects, server::createClient))
                .withPools(List.of(Pool.of("dynamo", "Qwen/Qwen3-0.6B", DirectFrontend.Role.PREFILL, 1),
                        Pool.of("dynamo", "Qwen/Qwen3-0.6B", DirectFrontend.Role.DECODE, 2),
                        Pool.of("other", "mistral", DirectFrontend.Role.AGGREGATED, 1).withDp(2))));
    }

    private List<GenericKubernetesResource> resources() {
        return admin.genericKubernetesResources(KubernetesRegistrar.DWM).inNamespace(NS).list().getItems();
    }

    private List<EndpointSlice> slices() {
        return admin.discovery().v1().endpointSlices().inNamespace(NS).withLabelSelector(SELECTOR).list().getItems();
    }

    private List<Pod> pods() {
        return admin.pods().inNamespace(NS).withLabelSelector(SELECTOR).list().getItems();
    }

    @Test
    @SuppressWarnings("unchecked")
    void podsMetadataAndSlicesAsTheOperatorAndDynamoWriteThem() throws Exception {
        start(Store.KubernetesObjects.ALL);
        Map<String, Pod> pods = pods().stream().collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> p));
        Map<String, GenericKubernetesResource> resources = resources().stream()
                .collect(Collectors.toMap(r -> r.getMetadata().getName(), r -> r));
        assertThat(pods).hasSize(4);
        assertThat(resources).hasSize(4);
        for (SimWorker w : fleet.workers()) {
            assertThat(w.instanceId()).isEqualTo(PodNames.hashPodName(w.name()));
            Pod pod = pods.get(w.name());
            assertThat(pod).as(w.name()).isNotNull();
            Map<String, String> labels = pod.getMetadata().getLabels();
            assertThat(labels).containsEntry("nvidia.com/dynamo-namespace", w.namespace())
                    .containsEntry("nvidia.com/dynamo-component", w.component())
                    .containsEntry("nvidia.com/dynamo-component-type", "worker");
            if (w.role() == DirectFrontend.Role.AGGREGATED) {
                assertThat(labels).doesNotContainKey("nvidia.com/dynamo-sub-component-type");
            } else {
                assertThat(labels).containsEntry("nvidia.com/dynamo-sub-component-type", w.component());
            }
            assertThat(pod.getStatus().getPhase()).isEqualTo("Running");
            assertThat(pod.getStatus().getConditions()).anySatisfy(c -> {
                assertThat(c.getType()).isEqualTo("Ready");
                assertThat(c.getStatus()).isEqualTo("True");
            });

            GenericKubernetesResource r = resources.get(w.name());
            assertThat(r.getApiVersion()).isEqualTo("nvidia.com/v1alpha1");
            assertThat(r.getKind()).isEqualTo("DynamoWorkerMetadata");
            assertThat(r.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
                assertThat(o.getKind()).isEqualTo("Pod");
                assertThat(o.getName()).isEqualTo(w.name());
                assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid());
                assertThat(o.getController()).isTrue();
            });
            Map<String, Object> data = (Map<String, Object>) ((Map<String, Object>) r.getAdditionalProperties().get("spec")).get("data");
            String hex = Long.toHexString(w.instanceId());
            String key = w.namespace() + "/" + w.component() + "/generate/" + hex;
            Map<String, Object> endpoint = (Map<String, Object>) ((Map<String, Object>) data.get("endpoints")).get(key);
            Map<String, Object> card = (Map<String, Object>) ((Map<String, Object>) data.get("model_cards")).get(key);
            assertThat(endpoint).as(key).containsEntry("type", "Endpoint");
            assertThat(new BigInteger(endpoint.get("instance_id").toString())).isEqualTo(w.instanceId());
            assertThat(card).containsEntry("type", "Model");
            assertThat(new BigInteger(card.get("instance_id").toString())).isEqualTo(w.instanceId());
            assertThat((Map<String, Object>) card.get("card_json")).containsEntry("display_name", w.model());
            Map<String, Object> channels = (Map<String, Object>) data.get("event_channels");
            assertThat(channels).containsOnlyKeys("namespace/" + w.namespace() + "/component/" + w.component()
                    + "/endpoint/generate/topic/kv_metrics/" + Long.toHexString(w.publisherId()));
        }

        // One slice per (Dynamo namespace, component), every worker a ready endpoint pointing at its Pod.
        Map<String, List<String>> ready = slices().stream().collect(Collectors.toMap(
                s -> s.getMetadata().getLabels().get("nvidia.com/dynamo-namespace") + "/"
                        + s.getMetadata().getLabels().get("nvidia.com/dynamo-component"),
                s -> s.getEndpoints().stream().filter(e -> Boolean.TRUE.equals(e.getConditions().getReady()))
                        .map(Endpoint::getTargetRef).map(t -> t.getName()).sorted().toList()));
        Map<String, List<String>> expected = fleet.workers().stream().collect(Collectors.groupingBy(
                w -> w.namespace() + "/" + w.component(),
                Collectors.mapping(SimWorker::name, Collectors.collectingAndThen(Collectors.toList(),
                        l -> l.stream().sorted().toList()))));
        assertThat(ready).isEqualTo(expected).hasSize(3);

        fleet.close();
        fleet = null;
        assertThat(pods()).isEmpty();
        assertThat(resources()).isEmpty();
        assertThat(slices()).isEmpty();
    }

    @Test
    void metadataAloneHasNoPodsAndNoOwners() throws Exception {
        start(Store.KubernetesObjects.METADATA);
        assertThat(pods()).isEmpty();
        assertThat(resources()).hasSize(4).allSatisfy(r -> assertThat(r.getMetadata().getOwnerReferences())
                .isNullOrEmpty());
        assertThat(slices()).hasSize(3);
    }

    @Test
    void podsAloneHaveNoMetadata() throws Exception {
        start(Store.KubernetesObjects.PODS);
        assertThat(pods()).hasSize(4);
        assertThat(resources()).isEmpty();
        assertThat(slices()).isEmpty();
    }
}
