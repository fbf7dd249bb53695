package dev.continuum.router.discovery.watch;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.DiscoveryReloadPlan;
import dev.continuum.router.discovery.config.RestartReason;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import dev.continuum.router.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DiscoverySupervisorTest {
    private static final EtcdConfig ETCD = EtcdConfig.defaults().withEndpoints(List.of("http://etcd:2379"))
            .withBackoff(new BackoffConfig(Duration.ofMillis(5), Duration.ofMillis(20)));
    private static final DiscoveryConfig ONE = DiscoveryConfig.etcd(ETCD);
    private static final DiscoveryConfig TWO = DiscoveryConfig.etcd(ETCD.withNamespaces("dynamo", List.of("prod", "canary")));

    private final MutableClock clock = MutableClock.atSeedExampleTime();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final List<ScriptedSource> sources = new CopyOnWriteArrayList<>();
    private final List<DiscoveryConfig> sourceConfigs = new CopyOnWriteArrayList<>();
    private final DiscoverySupervisor supervisor = DiscoverySupervisor.builder().meterRegistry(meters).clock(clock)
            .sourceFactory((config, counters) -> {
                ScriptedSource source = new ScriptedSource();
                sources.add(source);
                sourceConfigs.add(config);
                return source;
            })
            .stopGrace(Duration.ofSeconds(2))
            .build();

    @AfterEach
    void close() {
        supervisor.stop().join();
    }

    private static DiscoveryEvent.Put worker(String namespace, long id) {
        return DiscoveryEvent.Put.of(endpointKey(namespace, "decode", "generate", id),
                endpoint(namespace, "decode", "generate", id));
    }

    private ScriptedSource awaitSource(int number) {
        await().until(() -> sources.size() >= number);
        return sources.get(number - 1);
    }

    private List<String> workers() {
        return supervisor.registry().snapshot().workers().stream().map(DynamoWorker::id).map(Object::toString).toList();
    }

    private double restarts() {
        return meters.get("continuum_dynamo_discovery_events").tag("kind", "restart").counter().count();
    }

    @Test
    void disabledDiscoveryRunsNothingAndReadsAsDisabled() {
        supervisor.start(false, ONE);
        assertThat(supervisor.registry().isEnabled()).isFalse();
        assertThat(sources).isEmpty();
    }

    @Test
    void enablingByReloadStartsAWatcherAndCountsARestart() {
        supervisor.start(false, ONE);
        DiscoveryReloadPlan plan = supervisor.reload(true, ONE);
        assertThat(plan.reason()).isEqualTo(RestartReason.ENABLED);
        awaitSource(1).thenSeed(List.of(worker("dynamo", 1)));
        await().until(() -> workers().equals(List.of("dynamo/1")));
        assertThat(supervisor.registry().isEnabled()).isTrue();
        assertThat(restarts()).isEqualTo(1);
    }

    @Test
    void disablingStopsTheWatcherWithoutCountingARestart() {
        supervisor.start(true, ONE);
        ScriptedSource source = awaitSource(1).thenSeed(List.of(worker("dynamo", 1)));
        var pass = source.awaitPass(1);
        assertThat(supervisor.reload(false, ONE).action()).isEqualTo(DiscoveryReloadPlan.Action.STOP);
        assertThat(pass.closed).isTrue();
        assertThat(supervisor.registry().isEnabled()).isFalse();
        assertThat(supervisor.registry().snapshot().workers()).isEmpty();
        assertThat(restarts()).isZero();
    }

    @Test
    void aNamespaceChangeEmptiesTheRegistryAtOnce() {
        supervisor.start(true, ONE);
        awaitSource(1).thenSeed(List.of(worker("dynamo", 1)));
        await().until(() -> workers().equals(List.of("dynamo/1")));
        long generation = supervisor.registry().generation();

        DiscoveryConfig prod = DiscoveryConfig.etcd(ETCD.withNamespaces("prod", List.of()));
        assertThat(supervisor.reload(true, prod).reason()).isEqualTo(RestartReason.NAMESPACE);
        assertThat(workers()).isEmpty();
        assertThat(supervisor.registry().generation()).isGreaterThan(generation);
        assertThat(supervisor.registry().snapshot().namespaces()).containsExactly("prod");

        awaitSource(2).thenSeed(List.of(worker("prod", 9)));
        await().until(() -> workers().equals(List.of("prod/9")));
        assertThat(restarts()).isEqualTo(1);
    }

    @Test
    void aNamespacesEditPrunesOnlyRemovedNamespacesAndKeepsTheRestRoutable() {
        supervisor.start(true, TWO);
        awaitSource(1).thenSeed(List.of(worker("prod", 1), worker("canary", 2)));
        await().until(() -> workers().equals(List.of("canary/2", "prod/1")));
        DynamoWorker prodWorker = supervisor.registry().snapshot().worker("prod", 1).orElseThrow();

        DiscoveryConfig prodAndDev = DiscoveryConfig.etcd(ETCD.withNamespaces("dynamo", List.of("prod", "dev")));
        assertThat(supervisor.reload(true, prodAndDev).reason()).isEqualTo(RestartReason.NAMESPACES);
        assertThat(workers()).as("pruned at once, kept graph still routable").containsExactly("prod/1");

        clock.advance(Duration.ofMinutes(1));
        awaitSource(2).thenSeed(List.of(worker("prod", 1), worker("dev", 3)));
        await().until(() -> workers().equals(List.of("dev/3", "prod/1")));
        assertThat(supervisor.registry().snapshot().worker("prod", 1)).containsSame(prodWorker);
    }

    @Test
    void aBackoffOnlyChangeKeepsTheSnapshotUntilTheReplacementsFirstResync() {
        supervisor.start(true, ONE);
        awaitSource(1).thenSeed(List.of(worker("dynamo", 1)));
        await().until(() -> workers().equals(List.of("dynamo/1")));
        var before = supervisor.registry().snapshot().fleet();
        long generation = supervisor.registry().generation();

        DiscoveryConfig slower = DiscoveryConfig.etcd(ETCD.withBackoff(new BackoffConfig(Duration.ofMillis(50),
                Duration.ofSeconds(1))));
        assertThat(supervisor.reload(true, slower).reason()).isEqualTo(RestartReason.BACKOFF);
        assertThat(supervisor.registry().snapshot().fleet()).isSameAs(before);

        ScriptedSource replacement = awaitSource(2);
        clock.advance(Duration.ofMinutes(1));
        replacement.thenSeed(List.of(worker("dynamo", 1)));
        await().until(() -> ((WatcherSupervisor) supervisor).completedSeeds() == 1);
        assertThat(supervisor.registry().generation()).as("an unchanged fleet after the restart").isEqualTo(generation);
        assertThat(supervisor.registry().snapshot().fleet()).isEqualTo(before);

        assertThat(restarts()).isEqualTo(1);
    }

    @Test
    void aReloadBeforeStartIsAppliedByStart() {
        supervisor.reload(true, TWO);
        assertThat(sources).isEmpty();
        supervisor.start(true, TWO);
        assertThat(sourceConfigs).hasSize(1);
        assertThat(sourceConfigs.get(0).namespaces()).containsExactly("prod", "canary");
    }

    @Test
    void closeStopsAWatcherThatIgnoresInterruptsWithinTheGrace() {
        DiscoverySupervisor stubborn = DiscoverySupervisor.builder().stopGrace(Duration.ofMillis(200))
                .sourceFactory((config, counters) -> new WatchSource() {
                    @Override
                    public Pass open(Duration seedTimeout) {
                        long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                        while (System.nanoTime() < until) {
                            Thread.onSpinWait();
                        }
                        throw new IllegalStateException("gave up");
                    }

                    @Override
                    public String describe() {
                        return "stubborn";
                    }
                }).build();
        stubborn.start(true, ONE);
        long started = System.nanoTime();
        stubborn.stop().join();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        stubborn.stop().join();
    }

    @Test
    void theRegistryStaysReadableAfterClose() {
        supervisor.start(true, ONE);
        awaitSource(1).thenSeed(List.of(worker("dynamo", 1)));
        await().until(() -> workers().equals(List.of("dynamo/1")));
        supervisor.stop().join();
        assertThat(workers()).containsExactly("dynamo/1");
        assertThat(supervisor.registry().snapshot().connected()).isFalse();
    }

    @Test
    void aLifecycleComponentStopsOnceAndNotAfterAStopBeforeItsStart() {
        DiscoverySupervisor never = DiscoverySupervisor.builder().build();
        assertThat(never.state()).isEqualTo(LifecycleState.NEW);
        assertThat(never.stop()).isCompleted();
        assertThat(never.start(true, ONE)).isCompletedExceptionally();
        assertThat(never.state()).isEqualTo(LifecycleState.STOPPED);

        supervisor.start(false, ONE).join();
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STARTED);
        assertThat(supervisor.start(true, ONE)).isCompletedExceptionally();
        assertThat(sources).isEmpty();
        assertThat(supervisor.stop()).isSameAs(supervisor.stop());
        supervisor.stop().join();
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STOPPED);
    }
}
