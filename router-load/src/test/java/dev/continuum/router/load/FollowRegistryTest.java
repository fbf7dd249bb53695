package dev.continuum.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/** The thin adapter from discovery's registry: generations drive the subscriptions and the live gate. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FollowRegistryTest {
    private static final Instant T = Instant.parse("2026-09-23T04:11:02Z");

    @Test
    void takesOnlyKvMetricsPublishersAndTheSnapshotsWorkers() {
        DynamoWorker w = new DynamoWorker(Fixtures.worker(1), WorkerRole.DECODE, "decode", "generate", null, T, T);
        DynamoPublisher metrics = Fixtures.publisher(7, "tcp://127.0.0.1:1");
        DynamoPublisher events = new DynamoPublisher(new PublisherId("dynamo", 8), PublisherTopic.KV_EVENTS, "decode",
                null, "tcp://127.0.0.1:2");
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("dynamo"), FleetView.of(List.of(w),
                List.of(metrics, events)));

        LoadTargets t = LoadTargets.from(registry.snapshot());

        assertThat(t.publishers()).containsExactly(metrics);
        assertThat(t.liveWorkers()).containsOnly(java.util.Map.entry(Fixtures.worker(1), DpRanks.RANK_ZERO));
        assertThat(t.generation()).isEqualTo(registry.generation());
        assertThat(LoadTargets.from(dev.continuum.router.discovery.DynamoSnapshot.disabled(3)).publishers()).isEmpty();
    }

    @Test
    void followsRegistryGenerationsFromAppearanceToDeparture() throws Exception {
        try (ZContext zmq = new ZContext(1)) {
            TestPublisher pub = TestPublisher.bind(zmq, 7);
            DynamoWorker w = new DynamoWorker(Fixtures.worker(1), WorkerRole.DECODE, "decode", "generate", null, T, T);
            MutableDynamoRegistry registry = MutableDynamoRegistry.create();
            MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD,
                    List.of("dynamo"), FleetView.empty());
            LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry())
                    .backoff(RealPublisherTest.FAST).build();
            supervisor.start().join();
            try (AutoCloseable following = supervisor.follow(registry)) {
                writer.publish(FleetView.of(List.of(w), List.of(Fixtures.publisher(7, pub.address()))));
                await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10))
                        .until(() -> {
                            pub.publish(1, 0, null, 4L);
                            return supervisor.store().latest(Fixtures.worker(1), 0) != null;
                        });
                assertThat(supervisor.loadPublishers()).isEqualTo(1);

                writer.publish(FleetView.empty()); // the worker and its publisher leave

                await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.subscriptions().isEmpty()
                        && supervisor.store().size() == 0);
            } finally {
                supervisor.stop().join();
                pub.close();
            }
        }
    }
}
