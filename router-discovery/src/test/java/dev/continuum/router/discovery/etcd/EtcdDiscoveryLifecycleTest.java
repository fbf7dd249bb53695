package dev.continuum.router.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.testing.EtcdExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Against a real etcd: the supervisor owns the scheduler that closes etcd clients, and stopping releases it. */
@Timeout(60)
class EtcdDiscoveryLifecycleTest {
    @RegisterExtension
    static final EtcdExtension etcd = EtcdExtension.plain();

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void stoppingReleasesTheWatcherAndTheEtcdCloserAndIsIdempotent() throws Exception {
        await().atMost(10, TimeUnit.SECONDS).until(() -> threadsNamed("dynamo-discovery-etcd-closer") == 0);
        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                .withNamespaces("lifecycle", List.of())
                .withBackoff(new BackoffConfig(Duration.ofMillis(100), Duration.ofMillis(400)));
        DiscoverySupervisor supervisor = DiscoverySupervisor.builder().seedTimeout(Duration.ofSeconds(5)).build();
        supervisor.start(true, DiscoveryConfig.etcd(config)).join();
        assertThat(supervisor.state()).isEqualTo(LifecycleState.STARTED);
        DynamoRegistry registry = supervisor.registry();
        await().until(() -> registry.snapshot().connected());
        // Another namespace replaces the watcher: the old pass's client is handed to the closer.
        supervisor.reload(true, DiscoveryConfig.etcd(config.withNamespaces("lifecycle-2", List.of())));
        await().until(() -> registry.snapshot().connected());
        await().atMost(10, TimeUnit.SECONDS).until(() -> threadsNamed("dynamo-discovery-etcd-closer") == 1);

        CompletableFuture<Void> stopped = supervisor.stop();
        assertThat(supervisor.stop()).isSameAs(stopped);
        stopped.get(30, TimeUnit.SECONDS);

        assertThat(supervisor.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(registry.snapshot().connected()).isFalse();
        // The closer ran the pending client close before ending; the watcher thread is gone too.
        await().atMost(10, TimeUnit.SECONDS).until(() -> threadsNamed("dynamo-discovery-") == 0);
    }
}
