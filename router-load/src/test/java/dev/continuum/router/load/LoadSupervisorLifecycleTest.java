package dev.continuum.router.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/** The supervisor owns its event loop and follow thread: none exists before the start, none after the stop. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoadSupervisorLifecycleTest {
    private static final Instant T = Instant.parse("2026-09-23T04:11:02Z");

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void stoppingEndsEveryThreadTheSupervisorStartedAndIsIdempotent() throws Exception {
        await().atMost(10, TimeUnit.SECONDS).until(() -> threadsNamed("continuum-load-") + threadsNamed("load-supervisor-") == 0);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        LoadSupervisor supervisor = LoadSupervisor.builder(meters).backoff(RealPublisherTest.FAST)
                .stopGrace(Duration.ofSeconds(1)).build();
        assertThat(threadsNamed("continuum-load-")).isZero();
        assertThat(supervisor.store().size()).isZero(); // readable before the start: the picker is wired first
        assertThatThrownBy(() -> supervisor.update(LoadTargets.EMPTY)).isInstanceOf(IllegalStateException.class);

        supervisor.start().join();
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STARTED);
        try (ZContext zmq = new ZContext(1)) {
            TestPublisher pub = TestPublisher.bind(zmq, 7);
            MutableDynamoRegistry registry = MutableDynamoRegistry.create();
            MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD,
                    List.of("dynamo"), FleetView.empty());
            try (AutoCloseable following = supervisor.follow(registry)) {
                writer.publish(FleetView.of(List.of(new DynamoWorker(Fixtures.worker(1), WorkerRole.DECODE, "decode",
                        "generate", null, T, T)), List.of(Fixtures.publisher(7, pub.address()))));
                await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10))
                        .until(() -> {
                            pub.publish(1, 0, null, 4L);
                            return supervisor.store().latest(Fixtures.worker(1), 0) != null;
                        });
                assertThat(threadsNamed("continuum-load-")).isEqualTo(1);
                assertThat(threadsNamed("load-supervisor-")).isEqualTo(1);
            }

            CompletableFuture<Void> stopped = supervisor.stop();
            assertThat(supervisor.stop()).isSameAs(stopped);
            stopped.get(20, TimeUnit.SECONDS);
            pub.close();
        }
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(supervisor.subscriptions()).isEmpty();
        assertThat(meters.find(LoadMetrics.SUBSCRIPTIONS).gauges()).isEmpty();
        supervisor.update(LoadTargets.EMPTY); // ignored after the stop, as a late registry event would be
        await().atMost(10, TimeUnit.SECONDS).until(() -> threadsNamed("continuum-load-") + threadsNamed("load-supervisor-") == 0);
    }

    @Test
    void stoppingANeverStartedSupervisorStartsNothing() {
        LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
        assertThat(supervisor.stop()).isCompleted();
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(supervisor.start()).isCompletedExceptionally();
    }
}
