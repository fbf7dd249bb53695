package dev.continuum.router.discovery.kubernetes;

import static dev.continuum.router.discovery.kubernetes.Pods.DYN_NS;
import static dev.continuum.router.discovery.kubernetes.Pods.NS;
import static dev.continuum.router.discovery.kubernetes.Pods.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What fabric8's CRUD mock cannot do (docs/decisions.md): continue-token paging, 410 Gone and a server-side close of
 * the watch, with the mock server in expectations mode answering exact requests.
 */
@Timeout(60)
class KubernetesPodSourceExpectationsTest {
    private static final KubernetesConfig CONFIG = new KubernetesConfig(NS, DYN_NS, List.of(), "solar-pro4", List.of(),
            new BackoffConfig(Duration.ofMillis(20), Duration.ofMillis(100)));
    private static final String SELECTOR = URLEncoder.encode(PodClassifier.labelSelector(CONFIG), StandardCharsets.UTF_8);
    private static final String PODS = "/api/v1/namespaces/" + NS + "/pods";

    private KubernetesMockServer server;
    private KubernetesClient admin;
    private DiscoverySupervisor supervisor;
    private final AtomicInteger clientsBuilt = new AtomicInteger();
    private final List<Boolean> connectedSeen = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startServer() {
        server = new KubernetesMockServer(false);
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

    private DynamoRegistry start(KubernetesLimits limits) {
        KubernetesClients clients = timeout -> {
            clientsBuilt.incrementAndGet();
            return KubernetesClients.build(admin.getConfiguration(), timeout);
        };
        supervisor = DiscoverySupervisor.builder()
                .sourceFactory((c, counters) -> new KubernetesPodSource(c.kubernetes(), clients, DiscoveryCounters.NONE,
                        limits))
                .build();
        supervisor.start(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES_PODS, CONFIG));
        DynamoRegistry registry = supervisor.registry();
        registry.subscribe(Runnable::run, generation -> connectedSeen.add(registry.snapshot().connected()));
        return registry;
    }

    private static String list(int limit, String continueToken) {
        return PODS + "?" + (continueToken == null ? "" : "continue=" + continueToken + "&") + "labelSelector="
                + SELECTOR + "&limit=" + limit;
    }

    private static String watch(String resourceVersion) {
        return watch(resourceVersion, 290);
    }

    private static String watch(String resourceVersion, int timeoutSeconds) {
        return PODS + "?allowWatchBookmarks=false&labelSelector=" + SELECTOR + "&resourceVersion=" + resourceVersion
                + "&timeoutSeconds=" + timeoutSeconds + "&watch=true";
    }

    private static Object page(String resourceVersion, String continueToken, Pod... pods) {
        return new PodListBuilder().withNewMetadata().withResourceVersion(resourceVersion).withContinue(continueToken)
                .endMetadata().withItems(pods).build();
    }

    private static Pod ready(String name) {
        return worker(name, "decode", null, "VllmDecodeWorker", true);
    }

    private static Set<Long> ids(DynamoRegistry registry) {
        return registry.snapshot().workers().stream().map(w -> w.instanceId()).collect(Collectors.toSet());
    }

    private static Set<Long> hashes(String... names) {
        Set<Long> ids = new java.util.HashSet<>();
        for (String name : names) {
            ids.add(PodNameHash.hashPodName(name));
        }
        return ids;
    }

    @Test
    void followsContinueTokensAndWatchesFromTheListsResourceVersion() {
        server.expect().get().withPath(list(2, null)).andReturn(200, page("41", "tok-1", ready("w-0"), ready("w-1")))
                .once();
        server.expect().get().withPath(list(2, "tok-1")).andReturn(200, page("41", null, ready("w-2"))).once();
        server.expect().get().withPath(watch("41")).andUpgradeToWebSocket().open()
                .waitFor(50).andEmit(new WatchEvent(ready("w-3"), "ADDED"))
                .done().always();
        DynamoRegistry registry = start(KubernetesLimits.defaults().withPods(2, 16_384));
        await().until(() -> ids(registry).equals(hashes("w-0", "w-1", "w-2", "w-3")));
    }

    @Test
    void a410GoneEndsThePassAndTheNextPassRelistsFromScratch() {
        server.expect().get().withPath(list(500, null)).andReturn(200, page("7", null, ready("w-0"))).once();
        server.expect().get().withPath(watch("7")).andUpgradeToWebSocket().open()
                .waitFor(20).andEmit(new WatchEvent(new StatusBuilder().withCode(410).withReason("Expired")
                        .withMessage("too old resource version: 7 (9)").build(), "ERROR"))
                .done().once();
        server.expect().get().withPath(list(500, null)).andReturn(200, page("12", null, ready("w-1"))).always();
        server.expect().get().withPath(watch("12")).andUpgradeToWebSocket().open().waitFor(100)
                .andEmit(new WatchEvent(ready("w-1"), "MODIFIED")).done().always();
        DynamoRegistry registry = start(KubernetesLimits.defaults());
        await().until(() -> ids(registry).equals(hashes("w-1")));
        assertThat(clientsBuilt.get()).isGreaterThanOrEqualTo(2);
        assertThat(connectedSeen).contains(false);
    }

    @Test
    void aRoutineServerCloseRelistsInsideThePassWithoutDroppingConnected() {
        server.expect().get().withPath(list(500, null)).andReturn(200, page("7", null, ready("w-0"))).once();
        // The server closes the watch after a session at least min(backoff max, watch timeout) long.
        server.expect().get().withPath(watch("7", 1)).andUpgradeToWebSocket().open()
                .waitFor(250).andEmit(new WatchEvent(ready("w-0"), "MODIFIED"))
                .done().once();
        server.expect().get().withPath(list(500, null)).andReturn(200, page("12", null, ready("w-0"), ready("w-1")))
                .always();
        server.expect().get().withPath(watch("12", 1)).andUpgradeToWebSocket().open().waitFor(1000)
                .andEmit(new WatchEvent(ready("w-1"), "MODIFIED")).done().always();
        DynamoRegistry registry = start(KubernetesLimits.defaults().withTimers(Duration.ofMillis(100),
                Duration.ofSeconds(320)));
        await().until(() -> registry.snapshot().connected());
        await().until(() -> ids(registry).equals(hashes("w-0", "w-1")));
        assertThat(clientsBuilt).hasValue(1);
        // The seed is published before the watch opens (connected false); from then on it never drops.
        List<Boolean> seen = new ArrayList<>(connectedSeen);
        assertThat(seen.subList(seen.indexOf(true), seen.size())).doesNotContain(false);
    }
}
