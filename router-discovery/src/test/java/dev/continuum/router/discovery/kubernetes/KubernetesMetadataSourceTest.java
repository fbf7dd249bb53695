package dev.continuum.router.discovery.kubernetes;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The metadata source against fabric8's CRUD mock server. Fixtures are synthesized from upstream's CRD shape
 * (ai-dynamo/dynamo lib/runtime/src/discovery/kube/crd.rs) around four Pod names: {@code spec.data} maps keyed by etcd
 * key suffix holding the same records an etcd fleet registers, each resource named after (and owned by) its Pod.
 */
@Timeout(60)
class KubernetesMetadataSourceTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String NS = "dynamo";
    private static final String DYN = "dynamo";
    private static final List<String> PODS = List.of("vllm-decode-0", "vllm-decode-1", "vllm-prefill-0",
            "vllm-prefill-7f9c8b6d5-x2k4p");
    private static final KubernetesConfig CONFIG = new KubernetesConfig(NS, DYN, List.of(), null, List.of(),
            new BackoffConfig(Duration.ofMillis(20), Duration.ofMillis(200)));

    private KubernetesMockServer server;
    private KubernetesClient admin;
    private DiscoverySupervisor supervisor;
    private final Map<DiscoveryEventKind, AtomicInteger> counts = new ConcurrentHashMap<>();

    @BeforeEach
    void startServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init();
        server.expectCustomResource(new io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext.Builder()
                .withGroup("nvidia.com").withVersion("v1alpha1").withKind(KubernetesMetadataSource.KIND)
                .withPlural("dynamoworkermetadatas").withScope("Namespaced").build());
        admin = server.createClient();
    }

    @AfterEach
    void stop() {
        if (supervisor != null) {
            supervisor.stop().join();
        }
        admin.close();
        MockServers.destroy(server);
    }

    private final AtomicInteger clientsBuilt = new AtomicInteger();

    private DynamoRegistry start(MetadataLimits limits) {
        return start(limits, KubernetesLimits.defaults());
    }

    private DynamoRegistry start(MetadataLimits limits, KubernetesLimits timers) {
        DiscoveryCounters counters = kind -> counts.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
        KubernetesClients clients = timeout -> {
            clientsBuilt.incrementAndGet();
            return KubernetesClients.build(admin.getConfiguration(), timeout);
        };
        supervisor = DiscoverySupervisor.builder()
                .sourceFactory((c, ignored) -> new KubernetesMetadataSource(c.kubernetes(), clients, counters,
                        timers, limits))
                .build();
        supervisor.start(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES, CONFIG));
        return supervisor.registry();
    }

    private int count(DiscoveryEventKind kind) {
        return counts.getOrDefault(kind, new AtomicInteger()).get();
    }

    /** The etcd records one worker Pod registers: endpoint, card, and its kv_metrics channel. */
    static Map<String, String> etcdRecords(String pod) {
        long id = PodNameHash.hashPodName(pod);
        String component = pod.contains("prefill") ? "prefill" : "decode";
        Map<String, String> records = new LinkedHashMap<>();
        records.put(endpointKey(DYN, component, "generate", id), endpoint(DYN, component, "generate", id));
        records.put(cardKey(DYN, component, "generate", id), model(DYN, component, "generate", id,
                card("Qwen/Qwen3-32B", component.equals("prefill") ? "Prefill" : "Decode")));
        long publisher = id ^ 0x5a5a;
        records.put(channelKey(DYN, component, "generate", "kv_metrics", publisher),
                channel(DYN, component, "generate", "kv_metrics", publisher, "tcp://10.0.0.9:41000"));
        return records;
    }

    /** The same records as one DynamoWorkerMetadata resource. */
    static GenericKubernetesResource resource(String pod, Map<String, String> records) throws Exception {
        Map<String, Object> endpoints = new LinkedHashMap<>();
        Map<String, Object> cards = new LinkedHashMap<>();
        Map<String, Object> channels = new LinkedHashMap<>();
        for (Map.Entry<String, String> r : records.entrySet()) {
            Object value = MAPPER.readValue(r.getValue(), Map.class);
            String key = r.getKey();
            if (key.startsWith("v1/instances/")) {
                endpoints.put(key.substring("v1/instances/".length()), value);
            } else if (key.startsWith("v1/mdc/")) {
                cards.put(key.substring("v1/mdc/".length()), value);
            } else {
                channels.put(key.substring("v1/event_channels/".length()), value);
            }
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("endpoints", endpoints);
        data.put("model_cards", cards);
        data.put("event_channels", channels);
        data.put("event_sources", null);
        return new GenericKubernetesResourceBuilder().withApiVersion(KubernetesMetadataSource.API_VERSION)
                .withKind(KubernetesMetadataSource.KIND)
                .withNewMetadata().withName(pod).withNamespace(NS)
                .addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(pod).withUid("uid-" + pod)
                .withController(true).endOwnerReference().endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("data", data))).build();
    }

    static EndpointSlice slice(String name, Map<String, Boolean> readiness) {
        EndpointSliceBuilder builder = new EndpointSliceBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .addToLabels(PodClassifier.BACKEND_LABEL, "kubernetes").addToLabels(PodClassifier.ENABLED_LABEL, "true")
                .endMetadata().withAddressType("IPv4");
        int i = 1;
        for (Map.Entry<String, Boolean> e : readiness.entrySet()) {
            builder.addNewEndpoint().withAddresses("10.0.1." + i++).withNewConditions().withReady(e.getValue())
                    .endConditions().withNewTargetRef().withKind("Pod").withName(e.getKey()).endTargetRef()
                    .endEndpoint();
        }
        return builder.build();
    }

    private void createResource(GenericKubernetesResource r) {
        admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT).inNamespace(NS).resource(r).create();
    }

    private static Map<String, Boolean> allReady() {
        Map<String, Boolean> ready = new LinkedHashMap<>();
        PODS.forEach(p -> ready.put(p, true));
        return ready;
    }

    @Test
    void fixturesGiveExactlyTheFleetViewOfTheEquivalentEtcdRecords() throws Exception {
        Map<String, String> all = new LinkedHashMap<>();
        for (String pod : PODS) {
            Map<String, String> records = etcdRecords(pod);
            all.putAll(records);
            createResource(resource(pod, records));
        }
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("vllm-abcde", allReady())).create();

        DiscoveryReducer etcd = DiscoveryReducer.create(List.of(DYN), Clock.systemUTC(), DiscoveryCounters.NONE);
        etcd.apply(new DiscoveryEvent.Resync(all.entrySet().stream()
                .map(e -> DiscoveryEvent.Put.of(e.getKey(), e.getValue())).toList()));
        FleetView expected = etcd.view();
        assertThat(expected.workers()).hasSize(4);
        assertThat(expected.publishers()).hasSize(4);

        DynamoRegistry registry = start(MetadataLimits.defaults());
        await().until(() -> registry.snapshot().connected() && registry.snapshot().workers().size() == 4);
        FleetView actual = registry.snapshot().fleet();
        assertThat(actual.workers()).hasSameSizeAs(expected.workers());
        for (int i = 0; i < expected.workers().size(); i++) {
            DynamoWorker want = expected.workers().get(i);
            assertThat(actual.workers().get(i).sameViewAs(want)).as(want.toString()).isTrue();
        }
        assertThat(actual.publishers()).isEqualTo(expected.publishers());
        assertThat(registry.snapshot().signals().load()).isTrue();
    }

    @Test
    void onlyResourcesWithAReadyEndpointAreFedAndSliceUpdatesToggleThem() throws Exception {
        for (String pod : PODS.subList(0, 2)) {
            createResource(resource(pod, etcdRecords(pod)));
        }
        Map<String, Boolean> readiness = new LinkedHashMap<>();
        readiness.put(PODS.get(0), true);
        readiness.put(PODS.get(1), false);
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", readiness)).create();
        DynamoRegistry registry = start(MetadataLimits.defaults());
        await().until(() -> registry.snapshot().connected());
        assertThat(registry.snapshot().workers()).extracting(DynamoWorker::instanceId)
                .containsExactly(PodNameHash.hashPodName(PODS.get(0)));

        readiness.put(PODS.get(1), true);
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", readiness)).update();
        await().until(() -> registry.snapshot().workers().size() == 2);

        admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT).inNamespace(NS).withName(PODS.get(0)).delete();
        await().until(() -> registry.snapshot().workers().size() == 1);
        admin.discovery().v1().endpointSlices().inNamespace(NS).withName("s").delete();
        await().until(() -> registry.snapshot().workers().isEmpty() && registry.snapshot().publishers().isEmpty());
        assertThat(registry.snapshot().connected()).isTrue();
    }

    @Test
    void aMismatchedIdRefusesTheWholeResourceOnceAndContainerModeIsRefused() throws Exception {
        // Records registered under another Pod's ID.
        createResource(resource(PODS.get(0), etcdRecords(PODS.get(1))));
        GenericKubernetesResource container = new GenericKubernetesResourceBuilder(resource(PODS.get(2) + "-sidecar",
                etcdRecords(PODS.get(2)))).editMetadata().editFirstOwnerReference().withName(PODS.get(2))
                .endOwnerReference().endMetadata().build();
        createResource(container);
        createResource(resource(PODS.get(3), etcdRecords(PODS.get(3))));
        Map<String, Boolean> ready = allReady();
        ready.put(PODS.get(2) + "-sidecar", true);
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", ready)).create();
        DynamoRegistry registry = start(MetadataLimits.defaults());
        await().until(() -> registry.snapshot().connected());
        assertThat(registry.snapshot().workers()).extracting(DynamoWorker::instanceId)
                .containsExactly(PodNameHash.hashPodName(PODS.get(3)));
        assertThat(count(DiscoveryEventKind.MISMATCH)).isEqualTo(1);
        assertThat(count(DiscoveryEventKind.REFUSED)).isEqualTo(1);
    }

    @Test
    void aMalformedUpdateKeepsTheLastValidRecords() throws Exception {
        createResource(resource(PODS.get(0), etcdRecords(PODS.get(0))));
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", allReady())).create();
        DynamoRegistry registry = start(MetadataLimits.defaults());
        await().until(() -> registry.snapshot().connected() && registry.snapshot().workers().size() == 1);
        GenericKubernetesResource current = admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT)
                .inNamespace(NS).withName(PODS.get(0)).get();
        current.setAdditionalProperty("spec", Map.of("data", "not an object"));
        admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT).inNamespace(NS).resource(current).update();
        await().until(() -> count(DiscoveryEventKind.MALFORMED) == 1);
        assertThat(registry.snapshot().workers()).hasSize(1);
    }

    @Test
    void resourcesBeyondTheCapAreRefusedAndCountedMalformed() throws Exception {
        for (String pod : PODS) {
            createResource(resource(pod, etcdRecords(pod)));
        }
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", allReady())).create();
        DynamoRegistry registry = start(new MetadataLimits(2, 500, 3, 16_384, MetadataLimits.MAX_HELD_RECORD_BYTES,
                MetadataLimits.MAX_CARD_BYTES));
        await().until(() -> registry.snapshot().connected());
        assertThat(registry.snapshot().workers()).hasSize(3);
        assertThat(count(DiscoveryEventKind.MALFORMED)).isEqualTo(1);
    }

    @Test
    void aStalledSliceWatchIsNoticedWhileTheResourceWatchIsBusy() throws Exception {
        createResource(resource(PODS.get(0), etcdRecords(PODS.get(0))));
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice("s", allReady())).create();
        DynamoRegistry registry = start(MetadataLimits.defaults(), KubernetesLimits.defaults()
                .withTimers(Duration.ofSeconds(290), Duration.ofMillis(600)));
        await().until(() -> registry.snapshot().connected());
        // Resource events every 100 ms keep only the resource watch's deadline fresh.
        long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        int i = 0;
        while (System.nanoTime() < until && clientsBuilt.get() < 2) {
            GenericKubernetesResource current = admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT)
                    .inNamespace(NS).withName(PODS.get(0)).get();
            current.getMetadata().setLabels(Map.of("touch", Integer.toString(i++)));
            admin.genericKubernetesResources(KubernetesMetadataSource.CONTEXT).inNamespace(NS).resource(current)
                    .update();
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
        }
        assertThat(clientsBuilt.get()).isGreaterThanOrEqualTo(2);
        await().until(() -> registry.snapshot().workers().size() == 1);
    }
}
