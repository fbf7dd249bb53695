package dev.continuum.router.load;

import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import static dev.continuum.router.load.Fixtures.publisher;
import static dev.continuum.router.load.Fixtures.targets;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.eventplane.Transport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/** The supervisor against real JeroMQ PUB sockets on loopback, sending upstream-format kv_metrics messages. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RealPublisherTest {
    static final Backoff FAST = new Backoff(Duration.ofMillis(20), Duration.ofMillis(100), Duration.ofSeconds(30));

    private final ZContext zmq = new ZContext(1);
    private final ManualTicker ticker = new ManualTicker();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DefaultLoadSupervisor supervisor = (DefaultLoadSupervisor) LoadSupervisor.builder(registry)
            .ticker(ticker).backoff(FAST).stopGrace(Duration.ofSeconds(1)).build();

    @BeforeEach
    void startSupervisor() {
        supervisor.start().join();
    }

    @AfterEach
    void tearDown() {
        supervisor.stop().join();
        zmq.close();
    }

    private double count(LoadEventResult r) {
        return supervisor.metrics().total(r);
    }

    /** PUB drops messages until the subscription reaches it: publish until one lands. */
    private void warmUp(TestPublisher pub, long worker) {
        warmUp(pub, worker, 1L);
    }

    /** Publishes {@code kvUsed} for rank 0 until a sample with that value from this publisher is held. */
    private void warmUp(TestPublisher pub, long worker, long kvUsed) {
        await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10)).until(() -> {
            pub.publish(worker, 0, null, kvUsed);
            LoadSample s = supervisor.store().latest(worker(worker), 0);
            return s != null && s.publisherId() == pub.publisherId && Long.valueOf(kvUsed).equals(s.load().kvUsedBlocks());
        });
    }

    private LoadSample awaitSample(long worker, long rank, long kvUsed) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            LoadSample s = supervisor.store().latest(worker(worker), rank);
            return s != null && Long.valueOf(kvUsed).equals(s.load().kvUsedBlocks());
        });
        return supervisor.store().latest(worker(worker), rank);
    }

    @Test
    void decodesARealPublishersSamplesIntoTheStoreAndTheGauges() {
        TestPublisher pub = TestPublisher.bind(zmq, 2046539);
        supervisor.update(targets(1, List.of(publisher(2046539, pub.address())), worker(0x1a7f2b)));

        warmUp(pub, 0x1a7f2b);
        pub.publish(0x1a7f2b, 0, 310L, 1200L);
        LoadSample s = awaitSample(0x1a7f2b, 0, 1200);

        assertThat(s.load().activeDecodeBlocks()).isEqualTo(310L);
        assertThat(s.publisherId()).isEqualTo(2046539);
        assertThat(supervisor.store().freshDefault(worker(0x1a7f2b), 0)).isEqualTo(s);
        assertThat(supervisor.subscriptions()).containsExactly(new SubscriptionView("kv_metrics", 2046539, "dynamo",
                "decode", SubscriptionState.CONNECTED, Transport.DIRECT));
        assertThat(registry.get(LoadMetrics.KV_USED_BLOCKS).tags("namespace", "dynamo", "worker", "1a7f2b",
                "dp_rank", "0").gauge().value()).isEqualTo(1200.0);
        assertThat(registry.find(LoadMetrics.ACTIVE_PREFILL_TOKENS).gauges()).isEmpty(); // nil: no series
        assertThat(registry.get(LoadMetrics.SUBSCRIPTIONS).tags("state", "connected", "transport", "direct").gauge()
                .value()).isEqualTo(1.0);
        assertThat(count(LoadEventResult.APPLIED)).isGreaterThan(0);
    }

    @Test
    void dropsARepeatedOrOlderSequenceAsDuplicate() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);
        long seq = pub.publish(1, 0, null, 50L);
        awaitSample(1, 0, 50);

        pub.sequence(seq); // resend the same sequence, then an older one
        pub.publish(1, 0, null, 51L);
        pub.sequence(seq - 1);
        pub.publish(1, 0, null, 52L);
        pub.sequence(seq + 1);
        pub.publish(1, 0, null, 53L);

        awaitSample(1, 0, 53);
        assertThat(count(LoadEventResult.DUPLICATE)).isEqualTo(2.0);
    }

    @Test
    void dropsThePublishersSamplesOnASequenceGap() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);
        pub.publish(1, 1, null, 10L);
        awaitSample(1, 1, 10);

        pub.sequence(pub.nextSequence() + 3); // three messages missed: rank 1 may have changed
        pub.publish(1, 0, null, 20L);

        awaitSample(1, 0, 20);
        assertThat(supervisor.store().latest(worker(1), 1)).isNull();
    }

    @Test
    void aRestartedPublisherWithANewIdReplacesTheOldSubscriptionAndItsSamples() {
        TestPublisher first = TestPublisher.bind(zmq, 100);
        supervisor.update(targets(1, List.of(publisher(100, first.address())), worker(1)));
        warmUp(first, 1);
        first.sequence(1_000);
        first.publish(1, 0, null, 5L);
        awaitSample(1, 0, 5);
        int port = first.port();
        first.close();

        TestPublisher second = TestPublisher.bind(zmq, 200, port);
        supervisor.update(targets(2, List.of(publisher(200, second.address())), worker(1)));
        warmUp(second, 1); // sequence 0 from a new publisher replaces sequence 1000 of the old one

        assertThat(supervisor.store().latest(worker(1), 0).publisherId()).isEqualTo(200);
        assertThat(supervisor.subscriptions()).extracting(SubscriptionView::publisherId).containsExactly(200L);
    }

    @Test
    void reconnectsAfterThePublisherRestartsOnTheSameEndpointAndDropsWhatItHeld() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);
        pub.publish(1, 1, null, 10L);
        awaitSample(1, 1, 10);
        int port = pub.port();
        pub.close();
        await().atMost(Duration.ofSeconds(10)).until(() ->
                supervisor.subscriptions().get(0).state() != SubscriptionState.CONNECTED);

        TestPublisher again = TestPublisher.bind(zmq, 7, port);
        warmUp(again, 1, 2L);

        assertThat(supervisor.store().latest(worker(1), 1)).isNull(); // dropped on connect: it may have changed
    }

    @Test
    void expiresSamplesPastMaxStalenessAndAppliesANewMaxStalenessImmediately() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);

        ticker.advance(Duration.ofSeconds(3).plusNanos(1));
        assertThat(supervisor.store().freshDefault(worker(1), 0)).isNull();

        supervisor.reconfigure(new LoadConfig(Duration.ofSeconds(10), Transport.DIRECT, null));
        assertThat(supervisor.store().freshDefault(worker(1), 0)).isNotNull();
        assertThat(supervisor.subscriptions().get(0).state()).isEqualTo(SubscriptionState.CONNECTED);
    }

    @Test
    void tearsTheSubscriptionDownWhenThePublisherLeavesDiscovery() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);

        supervisor.update(targets(2, List.of(), worker(1)));

        assertThat(supervisor.subscriptions()).isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> supervisor.store().latest(worker(1), 0) == null);
        assertThat(registry.find(LoadMetrics.KV_USED_BLOCKS).gauges()).isEmpty();
        assertThat(supervisor.loadPublishers()).isZero();
    }

    @Test
    void evictsADepartedWorkersSamplesAndSeries() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        DynamoPublisher p = publisher(7, pub.address());
        supervisor.update(targets(1, List.of(p), worker(1), worker(2)));
        warmUp(pub, 1);
        pub.publish(2, 0, null, 9L);
        awaitSample(2, 0, 9);

        supervisor.update(targets(2, List.of(p), worker(2)));

        assertThat(supervisor.store().latest(worker(1), 0)).isNull();
        assertThat(registry.find(LoadMetrics.KV_USED_BLOCKS).gauges()).hasSize(1);
        pub.publish(1, 0, null, 3L);
        await().atMost(Duration.ofSeconds(5)).until(() -> count(LoadEventResult.IDENTITY_MISMATCH) == 1.0);
        assertThat(supervisor.store().latest(worker(1), 0)).isNull();
    }

    @Test
    void dropsMessagesFromAPublisherOtherThanTheOneDiscoveryAnnounced() {
        TestPublisher pub = TestPublisher.bind(zmq, 8);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));

        await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10)).until(() -> {
            pub.publish(1, 0, null, 1L);
            return count(LoadEventResult.IDENTITY_MISMATCH) > 0;
        });
        assertThat(supervisor.store().size()).isZero();
    }

    @Test
    void keepsSubscriptionsPendingUnderBrokerTransportWithoutTheBusAndReturnsToDirect() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);

        supervisor.reconfigure(new LoadConfig(Duration.ofSeconds(3), Transport.BROKER, null));
        assertThat(supervisor.subscriptions()).extracting(SubscriptionView::state, SubscriptionView::transport)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(SubscriptionState.PENDING, Transport.BROKER));

        supervisor.reconfigure(new LoadConfig(Duration.ofSeconds(3), Transport.DIRECT, null));
        await().atMost(Duration.ofSeconds(10)).until(() ->
                supervisor.subscriptions().get(0).state() == SubscriptionState.CONNECTED);
    }

    @Test
    void restartsSubscriptionsUnderANewAllowListAndNeverConnectsOutsideIt() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
        warmUp(pub, 1);

        supervisor.reconfigure(new LoadConfig(Duration.ofSeconds(3), Transport.DIRECT, List.of("10.0.0.0/8")));

        await().atMost(Duration.ofSeconds(10)).until(() -> count(LoadEventResult.TRANSPORT_REFUSED) >= 2);
        assertThat(supervisor.subscriptions().get(0).state()).isNotEqualTo(SubscriptionState.CONNECTED);
    }
}
