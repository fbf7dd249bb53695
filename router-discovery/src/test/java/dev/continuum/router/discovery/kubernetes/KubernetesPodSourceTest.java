package dev.continuum.router.discovery.kubernetes;

import static dev.continuum.router.discovery.kubernetes.Pods.DYN_NS;
import static dev.continuum.router.discovery.kubernetes.Pods.NS;
import static dev.continuum.router.discovery.kubernetes.Pods.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.discovery.admin.DynamoWorkersJson;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Pod source against fabric8's mock API server in CRUD mode: real list, watch and resourceVersion semantics
 * over HTTP, driven through the production supervisor, watcher and reducer.
 */
@Timeout(60)
class KubernetesPodSourceTest {
    private static final BackoffConfig FAST = new BackoffConfig(Duration.ofMillis(20), Duration.ofMillis(200));

    private KubernetesMockServer server;
    private KubernetesClient admin;
    private DiscoverySupervisor supervisor;
    private final AtomicInteger clientsBuilt = new AtomicInteger();
    private final Map<DiscoveryEventKind, AtomicInteger> counts = new ConcurrentHashMap<>();

    @BeforeEach
    void startServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init();
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

    private DynamoRegistry start(KubernetesConfig config, KubernetesLimits limits) {
        DiscoveryCounters counters = kind -> counts.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
        KubernetesClients clients = timeout -> {
            clientsBuilt.incrementAndGet();
            return KubernetesClients.build(admin.getConfiguration(), timeout);
        };
        supervisor = DiscoverySupervisor.builder()
                .sourceFactory((c, ignored) -> c.source() == DiscoverySourceKind.KUBERNETES
                        ? new KubernetesMetadataSource(c.kubernetes(), clients, counters, limits,
                                MetadataLimits.defaults())
                        : new KubernetesPodSource(c.kubernetes(), clients, counters, limits))
                .build();
        supervisor.start(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES_PODS, config));
        return supervisor.registry();
    }

    private static KubernetesConfig singleModel() {
        return new KubernetesConfig(NS, DYN_NS, List.of(), "solar-pro4", List.of(), FAST);
    }

    private static KubernetesLimits quiet() {
        // No idle deadline or routine close inside a test unless the test asks for one.
        return KubernetesLimits.defaults();
    }

    private void create(Pod pod) {
        admin.pods().inNamespace(NS).resource(pod).create();
    }

    private void update(Pod pod) {
        admin.pods().inNamespace(NS).resource(pod).update();
    }

    private static Map<String, String> view(DynamoRegistry registry) {
        return registry.snapshot().workers().stream().collect(Collectors.toMap(
                w -> Long.toHexString(w.instanceId()), w -> w.role().wireName() + " " + w.model() + " " + w.component()));
    }

    private static String hex(String podName) {
        return Long.toHexString(PodNameHash.hashPodName(podName));
    }

    private int count(DiscoveryEventKind kind) {
        return counts.getOrDefault(kind, new AtomicInteger()).get();
    }

    @Test
    void readyWorkerPodsBecomeWorkersByTheLabelRules() {
        create(worker("vllm-decode-0", "decode", null, "VllmDecodeWorker", true));
        create(worker("vllm-prefill-0", "worker", "prefill", "VllmPrefillWorker", true));
        create(worker("vllm-agg-0", "worker", null, "VllmWorker", true));
        create(worker("frontend-0", "frontend", null, "Frontend", true));
        create(worker("planner-0", "planner", null, "Planner", true));
        create(worker("vllm-decode-1", "decode", null, "VllmDecodeWorker", false));
        create(Pods.pod("other-ns-0", "another-dynamo-ns", "decode", null, "VllmDecodeWorker", true, Map.of()));

        DynamoRegistry registry = start(singleModel(), quiet());
        await().until(() -> registry.snapshot().connected());
        assertThat(view(registry)).containsExactlyInAnyOrderEntriesOf(Map.of(
                hex("vllm-decode-0"), "decode solar-pro4 VllmDecodeWorker",
                hex("vllm-prefill-0"), "prefill solar-pro4 VllmPrefillWorker",
                hex("vllm-agg-0"), "aggregated solar-pro4 VllmWorker"));
        assertThat(registry.snapshot().workers()).allSatisfy(w -> assertThat(w.namespace()).isEqualTo(DYN_NS));
        var json = DynamoWorkersJson.render(registry.snapshot());
        assertThat(json.get("source").asText()).isEqualTo("kubernetes_pods");
        assertThat(json.get("signals").toString()).isEqualTo("{\"load\":false,\"capacity\":false}");
    }

    @Test
    void podsFollowReadinessLabelsAndDeletionThroughTheWatch() {
        Pod decode = worker("vllm-decode-0", "decode", null, "VllmDecodeWorker", true);
        create(decode);
        DynamoRegistry registry = start(singleModel(), quiet());
        await().until(() -> registry.snapshot().connected() && view(registry).size() == 1);

        Pod late = worker("vllm-decode-1", "decode", null, "VllmDecodeWorker", false);
        create(late);
        update(Pods.withReady(late, true));
        await().until(() -> view(registry).containsKey(hex("vllm-decode-1")));

        update(Pods.withReady(decode, false));
        await().until(() -> !view(registry).containsKey(hex("vllm-decode-0")));

        // Relabelled out of discovery: gone, whether the server sends MODIFIED or DELETED for it.
        update(Pods.withLabel(Pods.withReady(decode, true), PodClassifier.ENABLED_LABEL, "false"));
        update(Pods.withLabel(late, PodClassifier.COMPONENT_TYPE_LABEL, "frontend"));
        await().until(() -> view(registry).isEmpty());

        create(worker("vllm-decode-2", "decode", null, "VllmDecodeWorker", true));
        await().until(() -> view(registry).containsKey(hex("vllm-decode-2")));
        admin.pods().inNamespace(NS).withName("vllm-decode-2").delete();
        await().until(() -> view(registry).isEmpty());
        assertThat(registry.snapshot().connected()).isTrue();
        assertThat(clientsBuilt).hasValue(1);
    }

    @Test
    void modelsMapByExactComponentAndUnlistedComponentsAreHeld() {
        KubernetesConfig config = new KubernetesConfig(NS, DYN_NS, List.of(), null, List.of(
                new KubernetesConfig.ModelMapping(null, "VllmWorker-decodeheavy", "solar-pro4"),
                new KubernetesConfig.ModelMapping(null, "VllmWorker-prefillheavy", "solar-pro4-longcontext")), FAST);
        create(worker("decodeheavy-0", "worker", null, "VllmWorker-decodeheavy", true));
        create(worker("prefillheavy-0", "worker", null, "VllmWorker-prefillheavy", true));
        create(worker("other-0", "worker", null, "vllmworker-decodeheavy", true));
        create(worker("unlabelled-0", "worker", null, null, true));
        DynamoRegistry registry = start(config, quiet());
        await().until(() -> registry.snapshot().connected());
        assertThat(view(registry)).containsExactlyInAnyOrderEntriesOf(Map.of(
                hex("decodeheavy-0"), "aggregated solar-pro4 VllmWorker-decodeheavy",
                hex("prefillheavy-0"), "aggregated solar-pro4-longcontext VllmWorker-prefillheavy"));
        assertThat(count(DiscoveryEventKind.MALFORMED) + count(DiscoveryEventKind.REFUSED)).isZero();
    }

    @Test
    void containerModePodsAreRefusedOnceAndCounted() {
        create(Pods.pod("vllm-decode-0", DYN_NS, "decode", null, "VllmDecodeWorker", true,
                Map.of(PodClassifier.DISCOVERY_MODE_ANNOTATION, "container")));
        create(worker("vllm-decode-1", "decode", null, "VllmDecodeWorker", true));
        DynamoRegistry registry = start(singleModel(), quiet());
        await().until(() -> registry.snapshot().connected() && view(registry).size() == 1);
        // A later update of the same refused Pod is not counted again.
        update(Pods.withLabel(Pods.pod("vllm-decode-0", DYN_NS, "decode", null, "VllmDecodeWorker", true,
                Map.of(PodClassifier.DISCOVERY_MODE_ANNOTATION, "container")), "extra", "x"));
        create(worker("vllm-decode-2", "decode", null, "VllmDecodeWorker", true));
        await().until(() -> view(registry).size() == 2);
        assertThat(view(registry)).containsOnlyKeys(hex("vllm-decode-1"), hex("vllm-decode-2"));
        assertThat(count(DiscoveryEventKind.REFUSED)).isEqualTo(1);
    }

    @Test
    void aWatchWithoutEventsPastTheIdleDeadlineEndsThePassAndRelists() {
        create(worker("vllm-decode-0", "decode", null, "VllmDecodeWorker", true));
        DynamoRegistry registry = start(singleModel(), KubernetesLimits.defaults()
                .withTimers(Duration.ofSeconds(290), Duration.ofMillis(300)));
        await().until(() -> clientsBuilt.get() >= 3);
        // Every pass relisted: the fleet is still right, and changes between passes are picked up.
        create(worker("vllm-decode-1", "decode", null, "VllmDecodeWorker", true));
        await().until(() -> view(registry).size() == 2);
    }

    @Test
    void listsInPagesUpToTheCap() {
        for (int i = 0; i < 7; i++) {
            create(worker("vllm-decode-" + i, "decode", null, "VllmDecodeWorker", true));
        }
        DynamoRegistry registry = start(singleModel(), KubernetesLimits.defaults().withPods(2, 5));
        await().until(() -> registry.snapshot().connected());
        assertThat(view(registry)).hasSize(5);
        assertThat(count(DiscoveryEventKind.REFUSED)).isEqualTo(2);
    }

    @Test
    void reloadsApplyLiveThroughTheSupervisor() {
        create(worker("vllm-decode-0", "decode", null, "VllmDecodeWorker", true));
        DynamoRegistry registry = start(singleModel(), quiet());
        await().until(() -> view(registry).values().stream().anyMatch(v -> v.contains("solar-pro4")));

        // A model edit resets (reason other) and the new watcher publishes the new model.
        supervisor.reload(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES_PODS,
                singleModel().withModel("solar-pro5", List.of())));
        await().until(() -> view(registry).values().stream().anyMatch(v -> v.contains("solar-pro5")));

        // Switching to the metadata source empties the registry (no DynamoWorkerMetadata exists here).
        supervisor.reload(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES, singleModel()));
        await().until(() -> registry.snapshot().source() == DiscoverySourceKind.KUBERNETES
                && registry.snapshot().workers().isEmpty());
    }
}
