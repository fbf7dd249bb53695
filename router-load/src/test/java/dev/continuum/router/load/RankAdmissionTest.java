package dev.continuum.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/**
 * Only the dp_ranks a worker's card declares enter the load store and the per-rank gauges, following the
 * registry generation: a real JeroMQ publisher floods distinct ranks for a worker whose card declares one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RankAdmissionTest {
    private static final Instant T = Instant.parse("2026-09-23T04:11:02Z");
    private static final long WORKER = 0x1a7f2b;

    private final ZContext zmq = new ZContext(1);
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final DefaultLoadSupervisor supervisor = (DefaultLoadSupervisor) LoadSupervisor.builder(meters)
            .backoff(RealPublisherTest.FAST).stopGrace(Duration.ofSeconds(1)).build();
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD,
            List.of("dynamo"), FleetView.empty());

    @BeforeEach
    void startSupervisor() {
        supervisor.start().join();
    }

    @AfterEach
    void tearDown() {
        supervisor.stop().join();
        zmq.close();
    }

    private static DynamoWorker worker(@Nullable Integer startRank, @Nullable Integer size) {
        ModelCard card = new ModelCard("m", null, false, 64, ModelCard.WorkerCapacity.UNKNOWN, startRank, size, null,
                ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(Fixtures.worker(WORKER), WorkerRole.DECODE, "decode", "generate", card, T, T);
    }

    /** PUB drops until the subscription is there and delivers in order after: repeat a marker until it lands. */
    private void publishUntilHeld(TestPublisher pub, long rank, long kvUsed) {
        await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10)).until(() -> {
            pub.publish(WORKER, rank, null, kvUsed);
            LoadSample s = supervisor.store().latest(Fixtures.worker(WORKER), rank);
            return s != null && Long.valueOf(kvUsed).equals(s.load().kvUsedBlocks());
        });
    }

    private int kvUsedSeries() {
        return meters.find(LoadMetrics.KV_USED_BLOCKS).gauges().size();
    }

    @Test
    void aFloodOfUndeclaredRanksCreatesNoSamplesAndNoSeries() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        DynamoPublisher publisher = Fixtures.publisher(7, pub.address());
        try (AutoCloseable following = supervisor.follow(registry)) {
            writer.publish(FleetView.of(List.of(worker(0, 1)), List.of(publisher)));
            publishUntilHeld(pub, 0, 1);

            for (long rank = 1; rank <= 5_000; rank++) {
                pub.publish(WORKER, rank, null, rank);
            }
            publishUntilHeld(pub, 0, 2); // in order: every flood message before it was handled

            assertThat(supervisor.store().size()).isEqualTo(1);
            assertThat(kvUsedSeries()).isEqualTo(1);
            assertThat(supervisor.metrics().total(LoadEventResult.IDENTITY_MISMATCH)).isPositive();
            assertThat(supervisor.metrics().total(LoadEventResult.OVER_CAPACITY)).isZero();
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            pub.close();
        }
    }

    @Test
    void aCardUpdateChangesTheAdmittedRanksAndUndeclaredOnesLeaveWithTheirGauges() {
        TestPublisher pub = TestPublisher.bind(zmq, 7);
        DynamoPublisher publisher = Fixtures.publisher(7, pub.address());
        try (AutoCloseable following = supervisor.follow(registry)) {
            writer.publish(FleetView.of(List.of(worker(null, null)), List.of(publisher))); // rank 0 only
            publishUntilHeld(pub, 0, 1);
            pub.publish(WORKER, 1, null, 5L);
            publishUntilHeld(pub, 0, 2);
            assertThat(supervisor.store().latest(Fixtures.worker(WORKER), 1)).isNull();

            writer.publish(FleetView.of(List.of(worker(2, 2)), List.of(publisher))); // ranks 2 and 3
            await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.store().size() == 0 && kvUsedSeries() == 0);
            publishUntilHeld(pub, 2, 20);
            publishUntilHeld(pub, 3, 30);
            pub.publish(WORKER, 4, null, 40L);
            pub.publish(WORKER, 0, null, 41L);
            publishUntilHeld(pub, 3, 31);

            assertThat(supervisor.store().size()).isEqualTo(2);
            assertThat(kvUsedSeries()).isEqualTo(2);
            assertThat(meters.find(LoadMetrics.KV_USED_BLOCKS).tag("dp_rank", "4").gauges()).isEmpty();
            assertThat(meters.find(LoadMetrics.KV_USED_BLOCKS).tag("dp_rank", "0").gauges()).isEmpty();
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            pub.close();
        }
    }
}
