package dev.continuum.router.load;

import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.SubscriptionView;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/**
 * Publisher faults against real JeroMQ PUB sockets, with the production reconnect backoff (500 ms to 30 s,
 * full jitter) and the registry driving the supervisor as discovery does: each fault converges within the
 * backoff's bound plus one second (an Awaitility condition wait, not a timing assertion). Sample age runs on
 * a hand-moved ticker, so staleness is decided by the test, not by the machine's speed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PublisherFaultsTest {
    private static final Duration CONVERGES = Backoff.DEFAULT.max().plusSeconds(1);
    private static final Instant T = Instant.parse("2026-09-23T04:11:02Z");
    private static final long WORKER = 0x51;

    private final ZContext zmq = new ZContext(1);
    private final ManualTicker ticker = new ManualTicker();
    private final DefaultLoadSupervisor supervisor = (DefaultLoadSupervisor) LoadSupervisor
            .builder(new SimpleMeterRegistry()).ticker(ticker).backoff(Backoff.DEFAULT)
            .stopGrace(Duration.ofSeconds(1)).build();
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD,
            List.of("dynamo"), FleetView.empty());
    private final DynamoWorker worker = new DynamoWorker(Fixtures.worker(WORKER), WorkerRole.DECODE, "decode",
            "generate", null, T, T);
    private AutoCloseable following;

    @BeforeEach
    void startSupervisor() {
        supervisor.start().join();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (following != null) {
            following.close();
        }
        supervisor.stop().join();
        zmq.close();
    }

    private void fleet(DynamoPublisher... publishers) {
        writer.publish(FleetView.of(List.of(worker), List.of(publishers)));
    }

    /** PUB drops until the subscription reaches it: publish until this publisher's value is held. */
    private void publishUntilHeld(TestPublisher pub, long kvUsed) {
        await().pollInSameThread().pollInterval(Duration.ofMillis(20)).atMost(CONVERGES).until(() -> {
            pub.publish(WORKER, 0, null, kvUsed);
            LoadSample s = supervisor.store().latest(Fixtures.worker(WORKER), 0);
            return s != null && s.publisherId() == pub.publisherId
                    && Long.valueOf(kvUsed).equals(s.load().kvUsedBlocks());
        });
    }

    private List<SubscriptionView> subscriptions() {
        return supervisor.subscriptions();
    }

    @Test
    void aPublisherRestartedWithANewIdConvergesOnceDiscoveryShowsTheNewId() {
        TestPublisher first = TestPublisher.bind(zmq, 100);
        following = supervisor.follow(registry);
        fleet(Fixtures.publisher(100, first.address()));
        publishUntilHeld(first, 1);
        int port = first.port();
        first.close();

        // The worker process restarts on the same port with a new publisher ID before discovery sees it: the
        // old subscription reconnects to it, and its messages carry an ID that is not the subscribed one.
        TestPublisher second = TestPublisher.bind(zmq, 200, port);
        double mismatchesBefore = supervisor.metrics().total(LoadEventResult.IDENTITY_MISMATCH);
        await().pollInSameThread().pollInterval(Duration.ofMillis(20)).atMost(CONVERGES).until(() -> {
            second.publish(WORKER, 0, null, 2L);
            return supervisor.metrics().total(LoadEventResult.IDENTITY_MISMATCH) > mismatchesBefore;
        });
        assertThat(supervisor.store().latest(Fixtures.worker(WORKER), 0)).as("dropped on reconnect").isNull();

        fleet(Fixtures.publisher(200, second.address()));
        publishUntilHeld(second, 3);
        await().atMost(CONVERGES).until(() -> subscriptions().size() == 1
                && subscriptions().get(0).publisherId() == 200
                && subscriptions().get(0).state() == SubscriptionState.CONNECTED);
        second.close();
    }

    @Test
    void aStalledPublisherStaysSubscribedButItsSampleAgesOutAndComesBackWhenItResumes() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        following = supervisor.follow(registry);
        fleet(Fixtures.publisher(7, pub.address()));
        publishUntilHeld(pub, 1);

        // Stalled: the socket stays open, nothing is sent.
        ticker.advance(LoadStore.DEFAULT_MAX_STALENESS.plusNanos(1));
        assertThat(supervisor.store().freshDefault(Fixtures.worker(WORKER), 0)).isNull();
        assertThat(supervisor.store().latest(Fixtures.worker(WORKER), 0)).as("kept for the stall rule").isNotNull();
        assertThat(subscriptions()).singleElement()
                .satisfies(s -> assertThat(s.state()).isEqualTo(SubscriptionState.CONNECTED));

        pub.publish(WORKER, 0, null, 2L);
        await().atMost(CONVERGES).until(() -> supervisor.store().freshDefault(Fixtures.worker(WORKER), 0) != null);
        pub.close();
    }

    @Test
    void aSilencedPublisherLeavesConnectedAndItsWorkerLeavingDiscoveryEmptiesTheStore() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        following = supervisor.follow(registry);
        fleet(Fixtures.publisher(7, pub.address()));
        publishUntilHeld(pub, 1);
        int port = pub.port();

        pub.close(); // the process is gone: the connection closes, reconnects are refused
        await().atMost(CONVERGES).until(() -> subscriptions().get(0).state() != SubscriptionState.CONNECTED);

        // It comes back on its port: reconnected within the backoff's bound.
        TestPublisher again = TestPublisher.bind(zmq, 7, port);
        publishUntilHeld(again, 2);
        assertThat(subscriptions().get(0).state()).isEqualTo(SubscriptionState.CONNECTED);
        again.close();

        // Silenced for good, and its lease expires: subscription and samples go with the worker.
        writer.publish(FleetView.empty());
        await().atMost(CONVERGES).until(() -> subscriptions().isEmpty() && supervisor.store().size() == 0);
    }
}
