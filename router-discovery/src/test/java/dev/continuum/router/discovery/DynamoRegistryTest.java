package dev.continuum.router.discovery;

import static dev.continuum.router.discovery.Fleets.fleet;
import static dev.continuum.router.discovery.Fleets.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DynamoRegistryTest {
    private static final List<String> NAMESPACES = List.of("dynamo");

    @Test
    void aNewRegistryIsDisabledAtGenerationZero() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        assertThat(registry.generation()).isZero();
        assertThat(registry.isEnabled()).isFalse();
        assertThat(registry.snapshot().workers()).isEmpty();
        assertThat(registry.snapshot().namespace()).isEqualTo("dynamo");
    }

    @Test
    void publishingAChangedViewSwapsTheSnapshotAndBumpsTheGeneration() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        assertThat(registry.generation()).isEqualTo(1);

        FleetView one = fleet(worker("dynamo", 1, WorkerRole.DECODE, "m"));
        assertThat(writer.publish(one)).isTrue();
        assertThat(registry.generation()).isEqualTo(2);
        assertThat(registry.snapshot().generation()).isEqualTo(2);
        assertThat(registry.snapshot().fleet()).isSameAs(one);
    }

    @Test
    void anEqualViewBumpsNothing() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        writer.publish(fleet(worker("dynamo", 1, WorkerRole.DECODE, "m")));
        DynamoSnapshot before = registry.snapshot();
        assertThat(writer.publish(fleet(worker("dynamo", 1, WorkerRole.DECODE, "m")))).isFalse();
        assertThat(registry.generation()).isEqualTo(2);
        assertThat(registry.snapshot()).isSameAs(before);
    }

    @Test
    void theConnectionStateSwapsTheSnapshotWithoutANewGeneration() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        writer.setConnected(true);
        assertThat(registry.snapshot().connected()).isTrue();
        assertThat(registry.generation()).isEqualTo(1);
        writer.setConnected(false);
        assertThat(registry.snapshot().connected()).isFalse();
        assertThat(registry.generation()).isEqualTo(1);
    }

    @Test
    void aRevokedWriterCannotOverwriteItsReplacement() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var old = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        var replacement = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("canary"), FleetView.empty());
        assertThat(old.isCurrent()).isFalse();
        assertThat(old.publish(fleet(worker("dynamo", 1, WorkerRole.DECODE, "m")))).isFalse();
        old.setConnected(true);
        assertThat(registry.snapshot().workers()).isEmpty();
        assertThat(registry.snapshot().connected()).isFalse();
        assertThat(replacement.publish(fleet(worker("canary", 1, WorkerRole.DECODE, "m")))).isTrue();
    }

    @Test
    void reconfiguringWithTheSameSettingsAndViewKeepsTheGeneration() {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        FleetView view = fleet(worker("dynamo", 1, WorkerRole.DECODE, "m"));
        registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, view);
        long generation = registry.generation();
        registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, view);
        assertThat(registry.generation()).isEqualTo(generation);
        assertThat(registry.snapshot().fleet()).isSameAs(view);
    }

    @Test
    void theSnapshotIsSwappedBeforeTheGenerationMoves() throws Exception {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        AtomicReference<String> violation = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                long generation = registry.generation();
                DynamoSnapshot snapshot = registry.snapshot();
                if (snapshot.generation() < generation) {
                    violation.set("generation " + generation + " but snapshot " + snapshot.generation());
                }
            }
        });
        reader.start();
        for (int i = 1; i <= 20_000; i++) {
            writer.publish(fleet(worker("dynamo", i, WorkerRole.DECODE, "m")));
        }
        reader.interrupt();
        reader.join();
        assertThat(violation.get()).isNull();
        assertThat(registry.generation()).isEqualTo(20_001);
    }

    @Test
    void subscribersGetTheGenerationCoalescedNeverASnapshot() throws Exception {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            List<Long> seen = new CopyOnWriteArrayList<>();
            var subscription = registry.subscribe(executor, seen::add);
            for (int i = 1; i <= 500; i++) {
                writer.publish(fleet(worker("dynamo", i, WorkerRole.DECODE, "m")));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> !seen.isEmpty() && seen.get(seen.size() - 1) == 501);
            assertThat(seen).isSorted().hasSizeLessThanOrEqualTo(500);

            subscription.close();
            int delivered = seen.size();
            writer.publish(FleetView.empty());
            executor.submit(() -> { }).get();
            assertThat(seen).hasSize(delivered);
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void awaitGenerationReturnsOnceTheGenerationMovesPastTheGivenOne() throws Exception {
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, NAMESPACES, FleetView.empty());
        assertThat(registry.awaitGeneration(1, Duration.ofMillis(20))).isEqualTo(1);
        Thread publisher = new Thread(() -> writer.publish(fleet(worker("dynamo", 1, WorkerRole.DECODE, "m"))));
        publisher.start();
        assertThat(registry.awaitGeneration(1, Duration.ofSeconds(10))).isEqualTo(2);
        publisher.join();
    }
}
