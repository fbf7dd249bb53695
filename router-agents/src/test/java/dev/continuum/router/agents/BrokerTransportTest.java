package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BusFixture;
import dev.continuum.router.eventbus.BusTestClient;
import dev.continuum.router.eventbus.KvMetricsPublisher;
import dev.continuum.router.eventbus.BrokerConnector;
import dev.continuum.router.eventbus.BusStream;
import dev.continuum.router.eventbus.BusStreamException;
import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.Rendezvous;
import dev.continuum.router.eventbus.SubscribeTarget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.load.LoadConfig;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.LoadTargets;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.ZContext;

/**
 * kv_metrics subscriptions over the event bus, end to end in one JVM: the router's load supervisor with the
 * {@link BrokerConnector}, the real listener over TLS 1.3 + HTTP/2, real {@link BrokerAgent}s relaying to real
 * JeroMQ publishers. Pending without a covering session, the same store state as a direct dial, rendezvous
 * placement over two brokers and failover when one dies, draining, unadvertised targets, the open timeout, and
 * the transport switch. (The agent as its own OS process is covered by the router-app end-to-end test.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class BrokerTransportTest {
    static final String NS = "dynamo";
    private BusFixture fixture;
    private final EventBus bus = new EventBus(Duration.ofSeconds(5));
    private final ZContext zmq = new ZContext(1);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        fixture = BusFixture.attached(dir, "", bus);
    }

    @AfterEach
    void closeEach() throws Exception {
        fixture.closeAll(closeAfter);
    }

    @AfterAll
    void stop() {
        fixture.close();
        zmq.close();
    }

    // --- parts --------------------------------------------------------------------------------------------

    private BrokerAgent agent(String token, String clientId, AdvertisedTargets advertised) {
        return AgentFixture.agent(fixture, token, clientId, List.of(NS), settings -> new BrokerRole(settings.namespaces(),
                advertised), true, closeAfter);
    }

    private BrokerAgent agentA() {
        return agent(BusFixture.TOKEN_A, "broker-a", (ns, host, port) -> true);
    }

    private BrokerAgent agentB() {
        return agent(BusFixture.TOKEN_B, "broker-b.dynamo", (ns, host, port) -> true);
    }

    /** Counts the connector's opens, to show that a pending subscription does not poll. */
    static final class CountingConnector implements ZmtpConnector {
        final ZmtpConnector inner;
        final AtomicInteger connects = new AtomicInteger();

        CountingConnector(ZmtpConnector inner) {
            this.inner = inner;
        }

        @Override
        public Transport transport() {
            return inner.transport();
        }

        @Override
        public CompletableFuture<Channel> connect(ZmtpTarget target, EventLoop loop, ChannelHandler handler) {
            connects.incrementAndGet();
            return inner.connect(target, loop, handler);
        }

        @Override
        public CompletableFuture<Void> reachable(ZmtpTarget target) {
            return inner.reachable(target);
        }

        @Override
        public boolean carrierLost(Channel channel) {
            return inner.carrierLost(channel);
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    private final List<CountingConnector> connectors = new ArrayList<>();

    private LoadSupervisor supervisor(Transport transport) {
        LoadSupervisor s = LoadSupervisor.builder(new SimpleMeterRegistry())
                .config(new LoadConfig(Duration.ofMinutes(1), transport, null))
                .brokerConnector(() -> {
                    CountingConnector counting = new CountingConnector(
                            new BrokerConnector(bus, RandomGenerator.getDefault(), Duration.ZERO));
                    connectors.add(counting);
                    return counting;
                })
                .stopGrace(Duration.ofSeconds(2))
                .build();
        s.start().join();
        closeAfter.add(() -> s.stop().orTimeout(20, TimeUnit.SECONDS).join());
        return s;
    }

    private KvMetricsPublisher publisher(long id) {
        KvMetricsPublisher p = new KvMetricsPublisher(zmq, id);
        closeAfter.add(p);
        return p;
    }

    private static DynamoPublisher discovered(KvMetricsPublisher p) {
        return new DynamoPublisher(new PublisherId(NS, p.publisherId), PublisherTopic.KV_METRICS, "decode", "generate",
                p.address());
    }

    private static LoadTargets targets(List<KvMetricsPublisher> publishers, long... workers) {
        Map<WorkerId, DpRanks> live = new HashMap<>();
        for (long w : workers) {
            live.put(new WorkerId(NS, w), new DpRanks(0, 4));
        }
        return new LoadTargets(1, publishers.stream().map(BrokerTransportTest::discovered).toList(), live);
    }

    private static boolean all(LoadSupervisor s, SubscriptionState state, int count) {
        List<SubscriptionView> views = s.subscriptions();
        return views.size() == count && views.stream().allMatch(v -> v.state() == state);
    }

    /** PUB drops messages until the subscription reaches it: publish a marker until every store holds it. */
    private static long warmUp(KvMetricsPublisher p, long seq, long worker, long marker, LoadSupervisor... stores) {
        long[] next = {seq};
        await().pollInSameThread().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(20)).until(() -> {
            p.publish(p.publisherId, next[0]++, worker, 0, marker);
            for (LoadSupervisor s : stores) {
                LoadSample sample = s.store().latest(new WorkerId(NS, worker), 0);
                if (sample == null || sample.load().kvUsedBlocks() == null || sample.load().kvUsedBlocks() != marker) {
                    return false;
                }
            }
            return true;
        });
        return next[0];
    }

    // --- tests ---------------------------------------------------------------------------------------------

    @Test
    void pendingWithoutACoveringBrokerWithoutPollingThenSamplesFlowThroughIt() {
        KvMetricsPublisher pub = publisher(2046539);
        LoadSupervisor load = supervisor(Transport.BROKER);
        CountingConnector connector = connectors.get(connectors.size() - 1); // made by this supervisor's start
        load.update(targets(List.of(pub), 0x1a7f2b));

        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(3))
                .until(() -> all(load, SubscriptionState.PENDING, 1) && connector.connects.get() == 0);
        assertThat(load.subscriptions().get(0).transport()).isEqualTo(Transport.BROKER);

        BrokerAgent agent = agentA();
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.CONNECTED, 1));
        assertThat(connector.connects.get()).isEqualTo(1);
        assertThat(agent.relayCount()).isEqualTo(1);
        warmUp(pub, 1, 0x1a7f2b, 77, load);
        LoadSample sample = load.store().latest(new WorkerId(NS, 0x1a7f2b), 0);
        assertThat(sample.publisherId()).isEqualTo(2046539);
    }

    @Test
    void directAndBrokerTransportsReachTheSameStoreOnTheSameReplay() {
        KvMetricsPublisher pub = publisher(4242);
        agentA();
        LoadSupervisor direct = supervisor(Transport.DIRECT);
        LoadSupervisor broker = supervisor(Transport.BROKER);
        LoadTargets targets = targets(List.of(pub), 1, 2, 3);
        direct.update(targets);
        broker.update(targets);
        await().atMost(Duration.ofSeconds(10)).until(() -> all(direct, SubscriptionState.CONNECTED, 1)
                && all(broker, SubscriptionState.CONNECTED, 1));
        long seq = warmUp(pub, 100, 1, 5, direct, broker);

        // The replay: in order, a late (duplicate) sequence, a foreign publisher ID, a gap, then more in order.
        pub.publish(4242, seq++, 1, 1, 11);
        pub.publish(4242, seq++, 2, 0, 20);
        pub.publish(4242, seq - 2, 2, 0, 999);          // late: dropped
        pub.publish(9999, seq++, 3, 0, 888);            // another publisher's ID on this channel: dropped
        pub.publish(4242, seq + 5, 3, 2, 32);           // gap: this publisher's earlier samples are dropped first
        seq += 6;
        pub.publish(4242, seq++, 2, 3, 23);
        pub.publish(4242, seq++, 1, 0, 1000);           // the end marker
        await().atMost(Duration.ofSeconds(10)).until(() -> marker(direct) && marker(broker));

        assertThat(state(broker)).isEqualTo(state(direct)).isNotEmpty();
        assertThat(state(direct)).containsOnlyKeys("3/2", "2/3", "1/0");
    }

    private static boolean marker(LoadSupervisor s) {
        LoadSample sample = s.store().latest(new WorkerId(NS, 1), 0);
        return sample != null && Long.valueOf(1000).equals(sample.load().kvUsedBlocks());
    }

    /** worker/rank to (publisher, sequence, load): everything but the arrival time. */
    private static Map<String, String> state(LoadSupervisor s) {
        Map<String, String> out = new HashMap<>();
        for (long w = 1; w <= 3; w++) {
            for (int r = 0; r < 4; r++) {
                LoadSample sample = s.store().latest(new WorkerId(NS, w), r);
                if (sample != null) {
                    out.put(w + "/" + r, sample.publisherId() + "@" + sample.sequence() + ":" + sample.load());
                }
            }
        }
        return out;
    }

    @Test
    void twoBrokersSplitStreamsByRendezvousAndKillingOneMovesOnlyItsStreams() {
        BrokerAgent a = agentA();
        BrokerAgent b = agentB();
        List<KvMetricsPublisher> pubs = new ArrayList<>();
        int expectA = 0;
        for (int i = 0; i < 12; i++) {
            KvMetricsPublisher p = publisher(5000 + i);
            pubs.add(p);
            String key = Rendezvous.key(new SubscribeTarget.ZmqTcp(NS, "127.0.0.1", p.port), "kv_metrics");
            if (Long.compareUnsigned(Rendezvous.weight(key, "broker-a"), Rendezvous.weight(key, "broker-b.dynamo")) > 0) {
                expectA++;
            }
        }
        LoadSupervisor load = supervisor(Transport.BROKER);
        load.update(targets(pubs, 1));
        await().atMost(Duration.ofSeconds(15)).until(() -> all(load, SubscriptionState.CONNECTED, 12));
        assertThat(a.relayCount()).isEqualTo(expectA);
        assertThat(b.relayCount()).isEqualTo(12 - expectA);
        assertThat(expectA).isBetween(1, 11); // both brokers carry some: the split is exercised
        Set<String> onB = b.relayIds();

        a.abort();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.relayCount() == 12 && all(load, SubscriptionState.CONNECTED, 12));
        assertThat(b.relayIds()).containsAll(onB); // B's own streams never moved
        assertThat(new HashSet<>(b.relayIds())).hasSize(12);
    }

    @Test
    void aDrainingBrokerHandsItsStreamsToTheOtherOne() {
        BrokerAgent a = agentA();
        LoadSupervisor load = supervisor(Transport.BROKER);
        List<KvMetricsPublisher> pubs = List.of(publisher(6001), publisher(6002), publisher(6003));
        load.update(targets(pubs, 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.CONNECTED, 3));
        assertThat(a.relayCount()).isEqualTo(3);
        BrokerAgent b = agentB();
        assertThat(b.relayCount()).isZero(); // a joining broker takes nothing from open streams

        a.drain("test", Duration.ofSeconds(5)).orTimeout(10, TimeUnit.SECONDS).join();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.relayCount() == 3 && all(load, SubscriptionState.CONNECTED, 3));
        assertThat(a.relayCount()).isZero();
    }

    @Test
    void withoutAnyBrokerLeftSubscriptionsGoBackToPending() {
        BrokerAgent a = agentA();
        LoadSupervisor load = supervisor(Transport.BROKER);
        KvMetricsPublisher pub = publisher(7001);
        load.update(targets(List.of(pub), 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.CONNECTED, 1));
        warmUp(pub, 1, 1, 3, load);

        a.abort();
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.PENDING, 1));
        // A new broker restores it.
        BrokerAgent again = agentB();
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.CONNECTED, 1));
        assertThat(again.relayCount()).isEqualTo(1);
    }

    @Test
    void anUnadvertisedPublisherIsRefusedWhileAnAdvertisedOneConnects() throws Exception {
        KvMetricsPublisher advertised = publisher(8001);
        KvMetricsPublisher hidden = publisher(8002);
        agent(BusFixture.TOKEN_A, "broker-a", (ns, host, port) -> port == advertised.port);

        CompletableFuture<BusStream> refused = bus.openStream(
                new SubscribeTarget.ZmqTcp(NS, "127.0.0.1", hidden.port), "kv_metrics");
        assertThatThrownBy(() -> refused.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(BusStreamException.class, e -> {
                    assertThat(e.reason()).isEqualTo(BusStreamException.Reason.REFUSED);
                    assertThat(e.code()).isEqualTo("target_not_advertised");
                    assertThat(e.getMessage()).doesNotContain("127.0.0.1").doesNotContain(String.valueOf(hidden.port));
                });

        BusStream open = bus.openStream(new SubscribeTarget.ZmqTcp(NS, "127.0.0.1", advertised.port), "kv_metrics")
                .get(10, TimeUnit.SECONDS);
        assertThat(open.brokerId()).isEqualTo("broker-a.dynamo");
        open.channel().close(); // unhandled frames meanwhile are released by the pipeline's tail
        await().atMost(Duration.ofSeconds(5)).until(() -> bus.sessions().get(0).streamCount() == 0);
    }

    @Test
    void noSessionAndANamespaceNobodyCoversFailAtOnce() {
        assertThatThrownBy(() -> bus.openStream(new SubscribeTarget.ZmqTcp("nobody", "127.0.0.1", 1), "kv_metrics")
                .get(5, TimeUnit.SECONDS)).cause().isInstanceOfSatisfying(BusStreamException.class,
                        e -> assertThat(e.reason()).isEqualTo(BusStreamException.Reason.NO_SESSION));
    }

    @Test
    void aStreamThatNeverArrivesTimesOutAndIsUnsubscribed() throws Exception {
        EventBus impatient = new EventBus(Duration.ofMillis(300));
        impatient.attach(fixture.listener.sessions());
        try (BusTestClient client = fixture.client()) {
            BusTestClient.Exchange session = client.open(BusTestClient.session(BusFixture.TOKEN_A), false);
            session.sendLine(BusFixture.HELLO_A);
            assertThat(session.status()).isEqualTo("200");
            await().atMost(Duration.ofSeconds(5)).until(() -> impatient.covers(NS));

            CompletableFuture<BusStream> opening = impatient.openStream(
                    new SubscribeTarget.ZmqTcp(NS, "10.1.2.3", 4567), "kv_metrics");
            assertThatThrownBy(() -> opening.get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(BusStreamException.class, e -> {
                        assertThat(e.reason()).isEqualTo(BusStreamException.Reason.OPEN_TIMEOUT);
                        assertThat(e.getMessage()).doesNotContain("10.1.2.3").doesNotContain("4567");
                    });
            List<String> seen = new ArrayList<>();
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                String line = session.lines.poll();
                if (line != null) {
                    seen.add(line);
                }
                return seen.stream().anyMatch(l -> l.contains("\"unsubscribe\""));
            });
            assertThat(seen.stream().filter(l -> l.contains("\"subscribe\"")).findFirst().orElseThrow())
                    .contains("10.1.2.3");
            session.send("", true);
        } finally {
            impatient.detach();
        }
    }

    @Test
    void theTransportSwitchesWithoutClearingTheStore() {
        KvMetricsPublisher pub = publisher(9001);
        KvMetricsPublisher elsewhere = publisher(9002); // in a namespace no broker covers
        agentA();
        LoadSupervisor load = supervisor(Transport.DIRECT);
        DynamoPublisher other = new DynamoPublisher(new PublisherId("other", elsewhere.publisherId),
                PublisherTopic.KV_METRICS, "decode", "generate", elsewhere.address());
        WorkerId otherWorker = new WorkerId("other", 7);
        load.update(new LoadTargets(1, List.of(discovered(pub), other),
                Map.of(new WorkerId(NS, 1), new DpRanks(0, 4), otherWorker, new DpRanks(0, 4))));
        long seq = warmUp(pub, 1, 1, 40, load);
        long[] otherSeq = {1};
        await().pollInSameThread().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(20)).until(() -> {
            elsewhere.publish(elsewhere.publisherId, otherSeq[0]++, 7, 0, 70);
            return load.store().latest(otherWorker, 0) != null;
        });
        assertThat(load.subscriptions()).extracting(SubscriptionView::transport).containsOnly(Transport.DIRECT);

        load.reconfigure(new LoadConfig(Duration.ofMinutes(1), Transport.BROKER, null));
        // Only the subscriptions restarted: the store keeps what it held (each new connection drops only its
        // own publisher's samples when it connects, as every connect does).
        await().atMost(Duration.ofSeconds(10)).until(() -> load.subscriptions().size() == 2
                && load.subscriptions().stream().allMatch(v -> v.transport() == Transport.BROKER
                        && v.state() == (v.namespace().equals(NS) ? SubscriptionState.CONNECTED : SubscriptionState.PENDING)));
        assertThat(load.store().latest(otherWorker, 0)).isNotNull();
        seq = warmUp(pub, seq, 1, 41, load);

        load.reconfigure(new LoadConfig(Duration.ofMinutes(1), Transport.DIRECT, null));
        await().atMost(Duration.ofSeconds(10)).until(() -> all(load, SubscriptionState.CONNECTED, 2)
                && load.subscriptions().stream().allMatch(v -> v.transport() == Transport.DIRECT));
        warmUp(pub, seq, 1, 42, load);
    }
}
