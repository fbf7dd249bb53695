package dev.continuum.router.replicas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.WorkerPin;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sync thread runs only while {@code dynamo.replicas.enabled}: not started for a disabled config, started by a
 * reload that enables sync, stopped by one that disables it; session affinity works without it, and a full
 * session table forgets its expired bindings when a new session needs room (no thread sweeps it).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplicaSyncThreadTest {
    private static final String THREAD = "continuum-replica-sync";
    private static final ReplicasConfig ON = new ReplicasConfig(true, "g", "r1", Duration.ofMillis(100),
            Duration.ofMillis(200), Duration.ofMillis(5), 256, 64 * 1024, 16, Duration.ofMinutes(10));

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final LoadBasedPicking picking = LoadBasedPicking.create(LoadSupervisor.builder(meters).build().store(),
            System::nanoTime, meters, MutableDynamoRegistry.create());
    private final NatsConnection nats = new NatsConnection(meters); // no servers: NATS off
    private final ReplicaSync sync = new ReplicaSync(picking.activeSequences(), nats, meters, System::nanoTime);

    @AfterEach
    void tearDown() {
        sync.stop().join();
        nats.stop().join();
        picking.stop().join();
    }

    private static long syncThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals(THREAD)).count();
    }

    @Test
    void theThreadRunsOnlyWhileSyncIsEnabled() {
        await().atMost(Duration.ofSeconds(10)).until(() -> syncThreads() == 0); // another test's, stopping
        picking.start().join();
        nats.start().join();
        sync.apply(ReplicasConfig.DEFAULTS);
        sync.start().join();
        assertThat(syncThreads()).isZero();

        sync.apply(ON);
        assertThat(syncThreads()).isEqualTo(1);
        assertThat(sync.own().replica()).isEqualTo("r1");

        sync.apply(ReplicasConfig.DEFAULTS);
        await().atMost(Duration.ofSeconds(5)).until(() -> syncThreads() == 0);

        sync.apply(ON);
        assertThat(syncThreads()).isEqualTo(1);
        sync.stop().join();
        await().atMost(Duration.ofSeconds(5)).until(() -> syncThreads() == 0);
    }

    @Test
    void sessionsAreBoundWithoutSync() {
        picking.start().join();
        sync.apply(ReplicasConfig.DEFAULTS);
        sync.start().join();
        WorkerPin pin = new WorkerPin(new WorkerId("dynamo", 7), WorkerRole.AGGREGATED, 0, false);
        sync.sessions().bind("s-1", pin);
        assertThat(sync.sessions().bound("s-1")).isEqualTo(new SampleKey(pin.worker(), 0));
        assertThat(syncThreads()).isZero();
    }

    @Test
    void aFullTableForgetsExpiredBindingsWhenANewSessionComes() {
        AtomicLong now = new AtomicLong();
        SessionBindings table = new SessionBindings(now::get, b -> { });
        table.ttl(Duration.ofSeconds(10));
        WorkerPin pin = new WorkerPin(new WorkerId("dynamo", 7), WorkerRole.AGGREGATED, 0, false);
        for (int i = 0; i < SessionBindings.MAX_SESSIONS; i++) {
            table.bind("s-" + i, pin);
        }
        table.bind("late", pin);
        assertThat(table.bound("late")).isNull();
        assertThat(table.unbound()).isEqualTo(1);

        now.addAndGet(Duration.ofSeconds(11).toNanos()); // every binding expired
        table.bind("later", pin);
        assertThat(table.bound("later")).isNotNull();
        assertThat(table.size()).isEqualTo(1);
    }
}
