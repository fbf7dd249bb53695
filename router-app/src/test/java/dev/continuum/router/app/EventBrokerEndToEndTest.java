package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.kubernetes.KubernetesClients;
import dev.continuum.router.discovery.kubernetes.KubernetesLimits;
import dev.continuum.router.discovery.kubernetes.KubernetesMetadataSource;
import dev.continuum.router.discovery.kubernetes.MetadataLimits;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.eventbus.BrokerConnector;
import dev.continuum.router.eventbus.BrokerCoverage;
import dev.continuum.router.eventbus.BusSession;
import dev.continuum.router.eventbus.BusStream;
import dev.continuum.router.eventbus.BusStreamException;
import dev.continuum.router.eventbus.EventBusSupervisor;
import dev.continuum.router.eventbus.SubscribeTarget;
import dev.continuum.router.eventbus.config.EventBusConfig;
import dev.continuum.router.eventbus.config.EventBusSection;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.load.LoadConfig;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SelectionReason;
import dev.continuum.router.testing.TestCertificates;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.ZContext;

/**
 * The event broker as its own OS process ({@code continuum-router event-broker --config FILE}) between the
 * router's event bus and real JeroMQ publishers, reading DynamoWorkerMetadata from fabric8's mock API server. The
 * router side runs in this JVM: the event bus supervisor, discovery over the same mock server, and two load
 * supervisors fed by it, one dialing directly and one through the bus. Scenarios: the same store state on the
 * same replay; SIGKILL of the broker moves subscriptions to pending (namespace uncovered, decode selection
 * {@code round_robin_stale} once the samples age) and a new broker restores them and load selection; an
 * unadvertised publisher is refused; two brokers split streams by rendezvous and killing one moves only its
 * streams; SIGTERM drains.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class EventBrokerEndToEndTest {
    private static final String K8S_NS = "workers";
    private static final String DYN = "dynamo";
    static final String TOKEN_A = "broker-a-token-0123456789";
    static final String TOKEN_B = "broker-b-token-0123456789";
    /** Publishers (and DynamoWorkerMetadata) the fleet starts with; the heap benchmark sets more before setUp. */
    int publisherCount = 6;
    /** Each publisher also advertises a kv-events channel on a PUB socket of its own (KvEventsBrokerEndToEndTest). */
    boolean kvEvents;

    @TempDir
    Path dir;
    private KubernetesMockServer k8s;
    private KubernetesClient admin;
    private final ZContext zmq = new ZContext(1);
    final List<WorkerPod> publishers = new ArrayList<>();
    private final List<Process> children = new ArrayList<>();
    EventBusSupervisor bus;
    DiscoverySupervisor discovery;
    LoadSupervisor direct;
    LoadSupervisor broker;
    private TestCertificates certs;
    /** The broker-transport store's clock: real time plus what the test skips, so its samples can age at once. */
    private final AtomicLong skipped = new AtomicLong();
    private final LongSupplier brokerTicker = () -> System.nanoTime() + skipped.get();
    private static final Duration MAX_STALENESS = Duration.ofMinutes(1);

    @BeforeEach
    void setUp() throws Exception {
        k8s = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        k8s.init();
        k8s.expectCustomResource(new io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext.Builder()
                .withGroup("nvidia.com").withVersion("v1alpha1").withKind("DynamoWorkerMetadata")
                .withPlural("dynamoworkermetadatas").withScope("Namespaced").build());
        admin = k8s.createClient();
        certs = TestCertificates.generate(dir.resolve("certs"), List.of("localhost", "127.0.0.1"));

        EventBusSection section = new EventBusSection();
        LoadResult loaded = ConfigLoader.builder().dynamoSection(section).build().loadString(
                "dynamo:\n  enabled: true\n  event_bus:\n    enabled: true\n    listen: \"127.0.0.1:0\"\n"
                        + "    tls: {cert: \"" + certs.serverCert() + "\", key: \"" + certs.serverKey() + "\"}\n"
                        + "    brokers:\n"
                        + "      - {id: broker-a.dynamo, client_id: broker-a, token_hash: \"" + TokenHash.of(TOKEN_A)
                        + "\", namespaces: [dynamo]}\n"
                        + "      - {id: broker-b.dynamo, client_id: broker-b, token_hash: \"" + TokenHash.of(TOKEN_B)
                        + "\", namespaces: [dynamo]}\n"
                        // Two more for the heap benchmark's four sessions (EventBusHeapBench).
                        + "      - {id: broker-c.dynamo, client_id: broker-c, token_hash: \""
                        + TokenHash.of(token("broker-c")) + "\", namespaces: [dynamo]}\n"
                        + "      - {id: broker-d.dynamo, client_id: broker-d, token_hash: \""
                        + TokenHash.of(token("broker-d")) + "\", namespaces: [dynamo]}\n");
        assertThat(loaded.errors()).isEmpty();
        EventBusConfig busConfig = loaded.orThrow().dynamo().section(section);
        bus = new EventBusSupervisor(new SimpleMeterRegistry());
        bus.reload(true, busConfig);
        bus.start().join();

        for (int i = 0; i < publisherCount; i++) {
            publishers.add(new WorkerPod(zmq, "vllm-decode-" + i, kvEvents));
        }
        for (WorkerPod p : publishers) {
            p.createMetadata(admin, K8S_NS, "Qwen/Qwen3-32B");
        }
        EndpointSliceBuilder slice = new EndpointSliceBuilder().withNewMetadata().withName("vllm-slice")
                .withNamespace(K8S_NS).addToLabels("nvidia.com/dynamo-discovery-backend", "kubernetes")
                .addToLabels("nvidia.com/dynamo-discovery-enabled", "true").endMetadata().withAddressType("IPv4");
        int ip = 1;
        for (WorkerPod p : publishers) {
            slice.addNewEndpoint().withAddresses("10.0." + (ip / 250 + 1) + "." + (ip++ % 250 + 1)).withNewConditions().withReady(true).endConditions()
                    .withNewTargetRef().withKind("Pod").withName(p.pod).endTargetRef().endEndpoint();
        }
        admin.discovery().v1().endpointSlices().inNamespace(K8S_NS).resource(slice.build()).create();

        KubernetesConfig kube = new KubernetesConfig(K8S_NS, DYN, List.of(), null, List.of(),
                new BackoffConfig(Duration.ofMillis(50), Duration.ofMillis(500)));
        KubernetesClients clients = timeout -> KubernetesClients.build(admin.getConfiguration(), timeout);
        discovery = DiscoverySupervisor.builder()
                .sourceFactory((c, counters) -> new KubernetesMetadataSource(c.kubernetes(), clients, counters,
                        KubernetesLimits.defaults(), MetadataLimits.defaults()))
                .build();
        discovery.start(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES, kube)).join();
        await().atMost(Duration.ofSeconds(30)).until(() -> discovery.registry().snapshot().publishers().size()
                == publisherCount * (kvEvents ? 2 : 1));

        direct = load(Transport.DIRECT);
        broker = load(Transport.BROKER);
    }

    private LoadSupervisor load(Transport transport) {
        LoadSupervisor s = LoadSupervisor.builder(new SimpleMeterRegistry())
                .config(new LoadConfig(MAX_STALENESS, transport, null))
                .ticker(transport == Transport.BROKER ? brokerTicker : System::nanoTime)
                .brokerConnector(() -> new BrokerConnector(bus.bus()))
                .build();
        s.start().join();
        s.follow(discovery.registry());
        return s;
    }

    @AfterEach
    void tearDown() {
        for (Process child : children) {
            child.destroyForcibly();
        }
        if (broker != null) {
            broker.stop().join();
        }
        if (direct != null) {
            direct.stop().join();
        }
        if (discovery != null) {
            discovery.stop().join();
        }
        if (bus != null) {
            bus.stop().join();
        }
        zmq.close();
        admin.close();
        try {
            k8s.destroy();
        } catch (IllegalStateException e) {
            // fabric8's mock server may time out closing on a loaded machine after every assertion passed
        }
    }

    /** The token of the brokers[] entry with this client_id. */
    static String token(String clientId) {
        return clientId + "-token-0123456789";
    }

    /** Starts {@code continuum-router event-broker} in a child JVM with its own config and token files. */
    Process startBroker(String name, String clientId, String token) throws IOException {
        Path tokenFile = dir.resolve(name + ".token");
        Files.writeString(tokenFile, token + "\n");
        Path config = dir.resolve(name + ".yaml");
        Files.writeString(config, "bus:\n"
                + "  url: \"https://127.0.0.1:" + bus.listener().localAddress().getPort() + "\"\n"
                + "  client_id: " + clientId + "\n"
                + "  token_file: \"" + tokenFile + "\"\n"
                + "  tls: {ca: \"" + certs.caCert() + "\"}\n"
                + "  drain_timeout: 10s\n"
                + "discovery:\n  source: kubernetes\n"
                + "  kubernetes: {namespace: " + K8S_NS + ", dynamo_namespace: " + DYN
                + ", watch_reconnect_backoff: {initial: 50ms, max: 500ms}}\n");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-Dkubernetes.master=" + admin.getConfiguration().getMasterUrl(),
                "-Dkubernetes.auth.tryKubeConfig=false", "-Dkubernetes.auth.tryServiceAccount=false",
                "-Dkubernetes.trust.certificates=true",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "event-broker", "--config",
                config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile()).start();
        children.add(child);
        return child;
    }

    @org.jspecify.annotations.Nullable BusSession session(String entryId) {
        for (BusSession s : bus.bus().sessions()) {
            if (s.entryId().equals(entryId)) {
                return s;
            }
        }
        return null;
    }

    boolean all(LoadSupervisor s, SubscriptionState state) {
        List<SubscriptionView> views = s.subscriptions();
        return views.size() == publisherCount && views.stream().allMatch(v -> v.state() == state);
    }

    private String log(String name) throws IOException {
        return Files.readString(dir.resolve(name + ".log"));
    }

    /** Publishes a marker on every publisher until both stores hold it (PUB drops until subscribed). */
    void warmUp(long marker) {
        await().pollInSameThread().pollInterval(Duration.ofMillis(25)).atMost(Duration.ofSeconds(30)).until(() -> {
            boolean all = true;
            for (WorkerPod p : publishers) {
                p.publish(p.publisherId, p.sequence++, marker);
                for (LoadSupervisor s : List.of(direct, broker)) {
                    LoadSample sample = s.store().latest(p.worker(), 0);
                    all &= sample != null && Long.valueOf(marker).equals(sample.load().kvUsedBlocks());
                }
            }
            return all;
        });
    }

    private Map<WorkerId, String> state(LoadSupervisor s) {
        Map<WorkerId, String> out = new HashMap<>();
        for (WorkerPod p : publishers) {
            LoadSample sample = s.store().latest(p.worker(), 0);
            out.put(p.worker(), sample == null ? "none"
                    : sample.publisherId() + "@" + sample.sequence() + ":" + sample.load());
        }
        return out;
    }

    @Test
    void directAndBrokerReachTheSameStoreAndABrokerKillMovesSubscriptionsToPending() throws Exception {
        Process a = startBroker("broker-a", "broker-a", TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> all(broker, SubscriptionState.CONNECTED)
                && all(direct, SubscriptionState.CONNECTED));
        assertThat(broker.subscriptions()).extracting(SubscriptionView::transport).containsOnly(Transport.BROKER);
        warmUp(5);

        // The replay: in order, late, foreign publisher ID, a gap, in order again, then the end marker.
        for (WorkerPod p : publishers) {
            long s = p.sequence;
            p.publish(p.publisherId, s, 10);
            p.publish(p.publisherId, s - 1, 999);        // late: dropped
            p.publish(p.publisherId ^ 1, s + 1, 888);    // another publisher's ID on this channel: dropped
            p.publish(p.publisherId, s + 4, 40);         // a gap: this publisher's samples are dropped first
            p.publish(p.publisherId, s + 5, 1000);       // the end marker
            p.sequence = s + 6;
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> publishers.stream().allMatch(p -> List.of(direct, broker)
                .stream().allMatch(s -> {
                    LoadSample sample = s.store().latest(p.worker(), 0);
                    return sample != null && Long.valueOf(1000).equals(sample.load().kvUsedBlocks());
                })));
        assertThat(state(broker)).isEqualTo(state(direct));

        // Decode selection over the broker-fed store follows load while its samples are fresh.
        SimpleMeterRegistry selections = new SimpleMeterRegistry();
        DynamoWorkerPicker picker = DynamoWorkerPicker.loadBased(broker.store(), brokerTicker, selections);
        assertThat(decodeReason(picker)).isEqualTo(SelectionReason.LOAD);
        assertThat(coverage()).containsExactly(new BrokerCoverage(DYN, List.of("broker-a.dynamo"), 0, 0));

        // SIGKILL: the broker's subscriptions go pending, the direct ones do not notice; the namespace is uncovered.
        a.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(20)).until(() -> all(broker, SubscriptionState.PENDING));
        assertThat(all(direct, SubscriptionState.CONNECTED)).isTrue();
        assertThat(coverage()).containsExactly(new BrokerCoverage(DYN, List.of(), 6, 0));
        // Nothing refreshes the samples while pending: once they are older than max_staleness, decode
        // selection falls back to the round-robin cursor (round_robin_stale), in the counter too.
        skipped.addAndGet(MAX_STALENESS.plusSeconds(1).toNanos());
        assertThat(decodeReason(picker)).isEqualTo(SelectionReason.ROUND_ROBIN_STALE);
        assertThat(selections.get("continuum.dynamo.selection").tag("role", "decode")
                .tag("reason", "round_robin_stale").counter().count()).isEqualTo(1);

        // A new broker restores them, and fresh samples restore load selection.
        startBroker("broker-a2", "broker-a", TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> all(broker, SubscriptionState.CONNECTED));
        assertThat(coverage()).containsExactly(new BrokerCoverage(DYN, List.of("broker-a.dynamo"), 0, 0));
        warmUp(6);
        assertThat(decodeReason(picker)).isEqualTo(SelectionReason.LOAD);
    }

    /** One decode pick over the broker-fed store, answered at once; its reason. */
    private SelectionReason decodeReason(DynamoWorkerPicker picker) {
        Selection s = picker.pick(discovery.registry().snapshot(), new PickRequest("Qwen/Qwen3-32B", Set.of(DYN), 64));
        assertThat(s).isNotNull();
        s.dispatch().ended();
        return s.decodeReason();
    }

    /** broker_coverage as the admin view computes it for the broker-transport subscriptions. */
    private List<BrokerCoverage> coverage() {
        return BrokerCoverage.of(List.of(DYN), BrokerCoverage.carriers(bus.bus()), broker.subscriptions());
    }

    @Test
    void anUnadvertisedPublisherIsRefusedWhileAdvertisedOnesConnect() throws Exception {
        WorkerPod hidden = new WorkerPod(zmq, "not-in-metadata", kvEvents);
        startBroker("broker-a", "broker-a", TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> all(broker, SubscriptionState.CONNECTED));

        CompletableFuture<BusStream> refused = bus.bus().openStream(
                new SubscribeTarget.ZmqTcp(DYN, "127.0.0.1", hidden.port), "kv_metrics");
        await().atMost(Duration.ofSeconds(10)).until(refused::isDone);
        assertThat(refused).isCompletedExceptionally();
        refused.exceptionally(e -> {
            BusStreamException error = (BusStreamException) e;
            assertThat(error.reason()).isEqualTo(BusStreamException.Reason.REFUSED);
            assertThat(error.code()).isEqualTo("target_not_advertised");
            return null;
        }).join();
        hidden.socket.close();
    }

    @Test
    void twoBrokersSplitByRendezvousKillingOneMovesOnlyItsStreamsAndSigtermDrains() throws Exception {
        Process a = startBroker("broker-a", "broker-a", TOKEN_A);
        Process b = startBroker("broker-b", "broker-b", TOKEN_B);
        await().atMost(Duration.ofSeconds(60)).until(() -> session("broker-a.dynamo") != null
                && session("broker-b.dynamo") != null);
        await().atMost(Duration.ofSeconds(60)).until(() -> all(broker, SubscriptionState.CONNECTED));
        BusSession onA = session("broker-a.dynamo");
        BusSession onB = session("broker-b.dynamo");
        assertThat(onA.streamCount() + onB.streamCount()).isEqualTo(6);
        // The split is rendezvous placement: the same on every router replica, computed from configuration.
        int expectA = 0;
        for (WorkerPod p : publishers) {
            if (Long.compareUnsigned(weight(p, "broker-a"), weight(p, "broker-b")) > 0) {
                expectA++;
            }
        }
        assertThat(onA.streamCount()).isEqualTo(expectA);
        long issuedOnB = onB.commandsIssued();

        a.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> onB.streamCount() == 6
                && all(broker, SubscriptionState.CONNECTED));
        // B's own streams stayed put: it was commanded only the streams A carried.
        assertThat(onB.commandsIssued() - issuedOnB).isEqualTo(expectA);
        assertThat(session("broker-b.dynamo")).isSameAs(onB);

        // SIGTERM drains: B says draining, the router unsubscribes its streams, B ends its session and exits.
        Process a2 = startBroker("broker-a2", "broker-a", TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> session("broker-a.dynamo") != null);
        new ProcessBuilder("kill", "-TERM", Long.toString(b.pid())).inheritIO().start().waitFor();
        assertThat(b.waitFor(60, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(30)).until(() -> session("broker-b.dynamo") == null
                && session("broker-a.dynamo") != null && session("broker-a.dynamo").streamCount() == 6
                && all(broker, SubscriptionState.CONNECTED));
        assertThat(log("broker-b")).contains("draining");
        assertThat(a2.isAlive()).isTrue();
    }

    /** The rendezvous weight as docs/event-bus.md defines it, computed here independently of the router's code. */
    private static long weight(WorkerPod p, String clientId) throws Exception {
        byte[] key = (DYN + "\n127.0.0.1\n" + p.port + "\nkv_metrics").getBytes(StandardCharsets.UTF_8);
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        sha.update(ByteBuffer.allocate(8).putLong(key.length).array());
        sha.update(key);
        sha.update(clientId.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(sha.digest()).getLong();
    }
}
