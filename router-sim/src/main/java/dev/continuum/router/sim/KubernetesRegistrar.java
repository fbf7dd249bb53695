package dev.continuum.router.sim;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Kubernetes (upstream discovery/kube/): a worker is a Pod named {@link SimWorker#name()}, its instance ID is
 * {@code hash_pod_name} of that name. With metadata it writes, per worker, a DynamoWorkerMetadata resource of the
 * same name whose {@code spec.data} holds the records an etcd worker would write (maps {@code endpoints},
 * {@code model_cards}, {@code event_channels}, keyed by the bucket-relative key), and per (Dynamo namespace,
 * component) an operator-labelled EndpointSlice listing its workers as ready endpoints. With Pods it writes
 * operator-labelled Pods, Running and Ready. Close deletes everything it created, newest first.
 */
final class KubernetesRegistrar implements Registrar {
    static final ResourceDefinitionContext DWM = new ResourceDefinitionContext.Builder().withGroup("nvidia.com")
            .withVersion("v1alpha1").withKind("DynamoWorkerMetadata").withPlural("dynamoworkermetadatas")
            .withNamespaced(true).build();
    static final String BACKEND_LABEL = "nvidia.com/dynamo-discovery-backend";
    static final String ENABLED_LABEL = "nvidia.com/dynamo-discovery-enabled";
    static final String NAMESPACE_LABEL = "nvidia.com/dynamo-namespace";
    static final String COMPONENT_LABEL = "nvidia.com/dynamo-component";
    static final String COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type";
    static final String SUB_COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-sub-component-type";
    static final String GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name";
    static final String GRAPH = "continuum-sim";
    private static final System.Logger LOG = System.getLogger(KubernetesRegistrar.class.getName());
    private static final Map<String, String> MAPS = Map.of("v1/instances", "endpoints", "v1/mdc", "model_cards",
            "v1/event_channels", "event_channels");

    private final String namespace;
    private final Store.KubernetesObjects objects;
    private final KubernetesClient client;
    private final List<Runnable> deletions = new CopyOnWriteArrayList<>();

    KubernetesRegistrar(String namespace, Store.KubernetesObjects objects, KubernetesClient client) {
        this.namespace = namespace;
        this.objects = objects;
        this.client = client;
    }

    @Override
    public long instanceId(String workerName) {
        return PodNames.hashPodName(workerName);
    }

    @Override
    public void register(List<Registration> workers) {
        Map<String, String> podUids = new HashMap<>();
        if (objects != Store.KubernetesObjects.METADATA) {
            for (Registration r : workers) {
                podUids.put(r.worker().name(), createPod(r.worker()));
            }
        }
        if (objects != Store.KubernetesObjects.PODS) {
            Map<String, List<SimWorker>> byService = new LinkedHashMap<>();
            for (Registration r : workers) {
                createMetadata(r, podUids.get(r.worker().name()));
                byService.computeIfAbsent(serviceName(r.worker()), k -> new ArrayList<>()).add(r.worker());
            }
            byService.forEach(this::createSlice);
        }
    }

    /** Creates the Pod, then sets its status (an API server drops a status sent with create); returns its uid. */
    private String createPod(SimWorker w) {
        Pod pod = new PodBuilder().withMetadata(new ObjectMetaBuilder().withName(w.name()).withNamespace(namespace)
                        .withLabels(labels(w, true)).build())
                .withNewSpec().addNewContainer().withName("main").withImage("continuum-sim/worker:none")
                .endContainer().endSpec().build();
        Pod created = client.pods().inNamespace(namespace).resource(pod).create();
        deletions.add(() -> client.pods().inNamespace(namespace).withName(w.name()).delete());
        Pod running = new PodBuilder(created).withNewStatus().withPhase("Running").withPodIP(address(w))
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
        client.pods().inNamespace(namespace).resource(running).updateStatus();
        return created.getMetadata().getUid();
    }

    private void createMetadata(Registration r, @Nullable String podUid) {
        Map<String, Object> data = new LinkedHashMap<>();
        for (String map : List.of("endpoints", "model_cards", "event_channels")) {
            data.put(map, new LinkedHashMap<String, Object>());
        }
        for (Entry e : r.entries()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) java.util.Objects.requireNonNull(
                    data.get(MAPS.get(e.bucket())), "every bucket's map is put above");
            map.put(e.key(), client.getKubernetesSerialization().unmarshal(e.json(), Map.class));
        }
        ObjectMetaBuilder meta = new ObjectMetaBuilder().withName(r.worker().name()).withNamespace(namespace);
        if (podUid != null) {
            // Owned by its Pod, as upstream applies it; without a Pod there is no owner (a garbage collector
            // would delete a resource whose owner does not exist).
            meta.addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(r.worker().name())
                    .withUid(podUid).withController(true).endOwnerReference();
        }
        GenericKubernetesResource resource = new GenericKubernetesResourceBuilder().withApiVersion("nvidia.com/v1alpha1")
                .withKind("DynamoWorkerMetadata").withMetadata(meta.build())
                .withAdditionalProperties(Map.of("spec", Map.of("data", data))).build();
        client.genericKubernetesResources(DWM).inNamespace(namespace).resource(resource).create();
        deletions.add(() -> client.genericKubernetesResources(DWM).inNamespace(namespace)
                .withName(r.worker().name()).delete());
    }

    /** One slice per (Dynamo namespace, component), as a Service's EndpointSlice lists that component's Pods. */
    private void createSlice(String service, List<SimWorker> workers) {
        SimWorker first = workers.get(0);
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(BACKEND_LABEL, "kubernetes");
        labels.put(ENABLED_LABEL, "true");
        labels.put(NAMESPACE_LABEL, first.namespace());
        labels.put(COMPONENT_LABEL, first.component());
        labels.put("kubernetes.io/service-name", service);
        labels.put("endpointslice.kubernetes.io/managed-by", GRAPH);
        EndpointSliceBuilder slice = new EndpointSliceBuilder().withNewMetadata().withName(service + "-sim")
                .withNamespace(namespace).withLabels(labels).endMetadata().withAddressType("IPv4");
        for (SimWorker w : workers) {
            slice.addNewEndpoint().withAddresses(address(w)).withNewConditions().withReady(true).endConditions()
                    .withNewTargetRef().withKind("Pod").withName(w.name()).withNamespace(namespace).endTargetRef()
                    .endEndpoint();
        }
        EndpointSlice built = slice.build();
        client.discovery().v1().endpointSlices().inNamespace(namespace).resource(built).create();
        deletions.add(() -> client.discovery().v1().endpointSlices().inNamespace(namespace)
                .withName(built.getMetadata().getName()).delete());
    }

    /** The operator's labels; {@code discovery} adds the two that put a Pod under Kubernetes discovery. */
    static Map<String, String> labels(SimWorker w, boolean discovery) {
        Map<String, String> labels = new LinkedHashMap<>();
        if (discovery) {
            labels.put(BACKEND_LABEL, "kubernetes");
            labels.put(ENABLED_LABEL, "true");
        }
        labels.put(NAMESPACE_LABEL, w.namespace());
        labels.put(COMPONENT_LABEL, w.component());
        // The operator's worker type; a disaggregated worker says its half in the sub-component type.
        labels.put(COMPONENT_TYPE_LABEL, "worker");
        switch (w.role()) {
            case PREFILL -> labels.put(SUB_COMPONENT_TYPE_LABEL, "prefill");
            case DECODE -> labels.put(SUB_COMPONENT_TYPE_LABEL, "decode");
            case AGGREGATED -> {
            }
        }
        labels.put(GRAPH_LABEL, GRAPH);
        return labels;
    }

    static String serviceName(SimWorker w) {
        return PodNames.dns(w.namespace(), 24) + "-" + PodNames.dns(w.component(), 24);
    }

    /** A stable private address per worker: the objects need one; nothing connects to it. */
    private static String address(SimWorker w) {
        long h = w.instanceId();
        return "10.244." + ((h >>> 8) & 0xFF) + "." + (1 + (h & 0x7F));
    }

    @Override
    public void heartbeat() {
        // Kubernetes objects live until deleted.
    }

    @Override
    public void close() {
        List<Runnable> newestFirst = new ArrayList<>(deletions);
        Collections.reverse(newestFirst);
        for (Runnable delete : newestFirst) {
            try {
                delete.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "sim fleet: deleting a Kubernetes object failed: " + e);
            }
        }
        deletions.clear();
        client.close();
    }
}
