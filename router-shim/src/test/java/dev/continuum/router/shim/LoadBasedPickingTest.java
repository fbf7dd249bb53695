package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The picker's upkeep as a lifecycle component, on a hand-driven scheduler (its periodic task runs when the
 * test says so) and the real registry, whose change listener runs on that scheduler's executor.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoadBasedPickingTest {
    private static final String NS = "dynamo";

    /** Runs one-off tasks at once on the calling thread and keeps the periodic one for the test to run. */
    private static final class HandScheduler implements LoadBasedPicking.Scheduler {
        final List<Runnable> periodic = new ArrayList<>();
        final List<Duration> periods = new ArrayList<>();
        int cancelled;
        boolean shutdown;

        @Override
        public AutoCloseable every(Duration period, Runnable task) {
            periodic.add(task);
            periods.add(period);
            return () -> cancelled++;
        }

        @Override
        public void execute(Runnable command) {
            command.run();
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        void tick() {
            periodic.forEach(Runnable::run);
        }
    }

    private final ScriptedLoad load = new ScriptedLoad();
    private final LoadBasedPicker picker = new LoadBasedPicker(load, load, new SelectionMetrics(new SimpleMeterRegistry()));
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final HandScheduler scheduler = new HandScheduler();
    private final LoadBasedPicking picking = new LoadBasedPicking(picker, registry, () -> scheduler);

    @Test
    void buildsTheIndexOnEveryFleetChangeAndSweepsOnItsOwnTask() {
        MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of(NS),
                FleetView.of(List.of(worker(NS, 1, DECODE), worker(NS, 2, DECODE)), List.of()));
        picking.start().join();
        assertThat(picking.state()).isEqualTo(LifecycleState.STARTED);
        assertThat(scheduler.periods).containsExactly(LoadBasedPicking.SWEEP_INTERVAL,
                LoadBasedPicking.DRAIN_INTERVAL);
        // Built at start, before any request: both workers' rank ledgers exist.
        assertThat(picker.ledgers()).isEqualTo(2);

        PickRequest request = new PickRequest(MODEL, Set.of(NS), 64);
        picking.picker().pick(registry.snapshot(), request).dispatch().ended();
        picking.picker().pick(registry.snapshot(), request).dispatch().ended();
        assertThat(picker.ledgerKeys()).isEqualTo(2);

        // Worker 2 leaves: the listener rebuilds the index on the scheduler, not on the next request.
        writer.publish(FleetView.of(List.of(worker(NS, 1, DECODE), worker(NS, 3, DECODE)), List.of()));
        assertThat(picker.ledgers()).isEqualTo(3);

        // Its dispatches still count until they age out; the sweep then forgets its ledger.
        scheduler.tick();
        assertThat(picker.ledgers()).isEqualTo(3);
        load.advance(Duration.ofSeconds(31));
        scheduler.tick();
        assertThat(picker.ledgerKeys()).isZero();
        assertThat(picker.ledgers()).isEqualTo(2);

        picking.stop().join();
        assertThat(scheduler.cancelled).isEqualTo(2);
        assertThat(scheduler.shutdown).isTrue();
        // No longer following the registry: a change builds nothing until a request needs it.
        writer.publish(FleetView.of(List.of(worker(NS, 4, DECODE)), List.of()));
        assertThat(picker.ledgers()).isEqualTo(2);
        assertThat(picking.picker().pick(registry.snapshot(), request).decode().worker().instanceId()).isEqualTo(4);
    }

    @Test
    void theProductionSchedulerRunsOnADaemonThreadAndStopsWithTheComponent() {
        LoadBasedPicking real = LoadBasedPicking.create(load, load, new SimpleMeterRegistry(), registry);
        real.start().join();
        assertThat(Thread.getAllStackTraces().keySet()).anySatisfy(t -> {
            assertThat(t.getName()).isEqualTo("continuum-picker-upkeep");
            assertThat(t.isDaemon()).isTrue();
        });
        real.stop().join();
        assertThat(real.state()).isEqualTo(LifecycleState.STOPPED);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces()
                .keySet().stream().noneMatch(t -> t.getName().equals("continuum-picker-upkeep") && t.isAlive()));
    }
}
