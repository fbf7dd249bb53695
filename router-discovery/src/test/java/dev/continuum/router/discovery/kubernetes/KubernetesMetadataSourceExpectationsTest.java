package dev.continuum.router.discovery.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListMetaBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Paging of both lists and 410 Gone on the resource watch, which the CRUD mock cannot do. */
@Timeout(60)
class KubernetesMetadataSourceExpectationsTest {
    private static final String NS = "dynamo";
    private static final KubernetesConfig CONFIG = new KubernetesConfig(NS, "dynamo", List.of(), null, List.of(),
            new BackoffConfig(Duration.ofMillis(20), Duration.ofMillis(100)));
    private static final String SLICES = "/apis/discovery.k8s.io/v1/namespaces/" + NS + "/endpointslices";
    private static final String RESOURCES = "/apis/nvidia.com/v1alpha1/namespaces/" + NS + "/dynamoworkermetadatas";
    private static final String SELECTOR = URLEncoder.encode(KubernetesMetadataSource.SLICE_SELECTOR,
            StandardCharsets.UTF_8);

    private KubernetesMockServer server;
    private KubernetesClient admin;
    private DiscoverySupervisor supervisor;
    private final AtomicInteger clientsBuilt = new AtomicInteger();

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

    private static String watch(String path, String selector, String resourceVersion) {
        return path + "?allowWatchBookmarks=false" + (selector == null ? "" : "&labelSelector=" + selector)
                + "&resourceVersion=" + resourceVersion + "&timeoutSeconds=290&watch=true";
    }

    private static GenericKubernetesResourceList list(String resourceVersion, String continueToken,
                                                      GenericKubernetesResource... items) {
        GenericKubernetesResourceList list = new GenericKubernetesResourceList();
        list.setMetadata(new ListMetaBuilder().withResourceVersion(resourceVersion).withContinue(continueToken).build());
        list.setItems(List.of(items));
        return list;
    }

    @Test
    void pagesBothListsAndRelistsBothAfterA410OnTheResourceWatch() throws Exception {
        String a = "vllm-decode-0";
        String b = "vllm-decode-1";
        server.expect().get().withPath(SLICES + "?labelSelector=" + SELECTOR + "&limit=500")
                .andReturn(200, new EndpointSliceListBuilder().withMetadata(new ListMetaBuilder().withResourceVersion("5").build())
                        .withItems(KubernetesMetadataSourceTest.slice("s", Map.of(a, true, b, true))).build())
                .always();
        server.expect().get().withPath(RESOURCES + "?limit=32")
                .andReturn(200, list("9", "next", KubernetesMetadataSourceTest.resource(a,
                        KubernetesMetadataSourceTest.etcdRecords(a)))).once();
        server.expect().get().withPath(RESOURCES + "?continue=next&limit=32")
                .andReturn(200, list("9", null)).once();
        server.expect().get().withPath(watch(SLICES, SELECTOR, "5")).andUpgradeToWebSocket().open().waitFor(300)
                .andEmit(new WatchEvent(KubernetesMetadataSourceTest.slice("s", Map.of(a, true, b, true)), "MODIFIED"))
                .done().always();
        server.expect().get().withPath(watch(RESOURCES, null, "9")).andUpgradeToWebSocket().open().waitFor(30)
                .andEmit(new WatchEvent(new StatusBuilder().withCode(410).withReason("Expired").build(), "ERROR"))
                .done().once();
        // The relist after the 410 sees the second resource.
        server.expect().get().withPath(RESOURCES + "?limit=32")
                .andReturn(200, list("12", null,
                        KubernetesMetadataSourceTest.resource(a, KubernetesMetadataSourceTest.etcdRecords(a)),
                        KubernetesMetadataSourceTest.resource(b, KubernetesMetadataSourceTest.etcdRecords(b)))).always();
        server.expect().get().withPath(watch(RESOURCES, null, "12")).andUpgradeToWebSocket().open().waitFor(300)
                .andEmit(new WatchEvent(KubernetesMetadataSourceTest.resource(b, KubernetesMetadataSourceTest
                        .etcdRecords(b)), "MODIFIED")).done().always();

        KubernetesClients clients = timeout -> {
            clientsBuilt.incrementAndGet();
            return KubernetesClients.build(admin.getConfiguration(), timeout);
        };
        supervisor = DiscoverySupervisor.builder()
                .sourceFactory((c, counters) -> new KubernetesMetadataSource(c.kubernetes(), clients,
                        DiscoveryCounters.NONE, KubernetesLimits.defaults(), MetadataLimits.defaults()))
                .build();
        supervisor.start(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES, CONFIG));
        DynamoRegistry registry = supervisor.registry();
        await().until(() -> registry.snapshot().workers().size() == 2);
        assertThat(registry.snapshot().workers()).extracting(DynamoWorker::instanceId).containsExactlyInAnyOrder(
                PodNameHash.hashPodName(a), PodNameHash.hashPodName(b));
        assertThat(clientsBuilt.get()).isGreaterThanOrEqualTo(2);
    }
}
