package dev.continuum.router.discovery.etcd;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.testing.EtcdExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fleet faults against a real etcd process, with the production reconnect backoff (500 ms doubling to 30 s):
 * each fault converges within the backoff's bound plus one second. The bound is an Awaitility condition wait
 * ({@code atMost}), not an assertion on elapsed time.
 */
@Timeout(120)
class EtcdFaultsTest {
    @RegisterExtension
    static final EtcdExtension etcd = EtcdExtension.plain();

    /** The longest a watcher waits before its next pass, plus a second for the pass itself. */
    private static final Duration CONVERGES = BackoffConfig.DEFAULT_MAX.plusSeconds(1);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private DiscoverySupervisor supervisor;

    private DynamoRegistry start(String namespace, DiscoveryLimits limits) {
        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                .withNamespaces(namespace, List.of());
        supervisor = DiscoverySupervisor.builder().meterRegistry(meters).limits(limits)
                .seedTimeout(Duration.ofSeconds(10)).build();
        supervisor.start(true, DiscoveryConfig.etcd(config));
        return supervisor.registry();
    }

    @AfterEach
    void stop() {
        if (supervisor != null) {
            supervisor.stop().join();
        }
    }

    private static List<Long> ids(DynamoRegistry registry, String namespace) {
        return registry.snapshot().workers().stream().filter(w -> w.namespace().equals(namespace))
                .map(DynamoWorker::instanceId).toList();
    }

    private double events(String kind) {
        return meters.get("continuum_dynamo_discovery_events").tag("kind", kind).counter().count();
    }

    @Test
    void etcdKilledAndRestartedWithItsHistoryCompactedConvergesToTheFleetOfTheRestartedServer() throws Exception {
        String ns = "killcompact";
        etcd.put(endpointKey(ns, "decode", "generate", 1), endpoint(ns, "decode", "generate", 1));
        etcd.put(endpointKey(ns, "decode", "generate", 2), endpoint(ns, "decode", "generate", 2));
        DynamoRegistry registry = start(ns, DiscoveryLimits.defaults());
        await().atMost(CONVERGES).until(() -> registry.snapshot().connected()
                && ids(registry, ns).equals(List.of(1L, 2L)));

        etcd.kill();
        await().atMost(CONVERGES).until(() -> !registry.snapshot().connected());
        etcd.start();
        // While the router is away: one worker leaves, one joins, one changes role, and the history the router
        // last saw is compacted, so nothing can be resumed from its old revision.
        etcd.delete(endpointKey(ns, "decode", "generate", 1));
        etcd.put(endpointKey(ns, "decode", "generate", 3), endpoint(ns, "decode", "generate", 3));
        etcd.delete(endpointKey(ns, "decode", "generate", 2));
        long revision = etcd.put(endpointKey(ns, "prefill", "generate", 2), endpoint(ns, "prefill", "generate", 2));
        etcd.compact(revision);

        await().atMost(CONVERGES).until(() -> registry.snapshot().connected()
                && ids(registry, ns).equals(List.of(2L, 3L)));
        assertThat(registry.snapshot().worker(ns, 2).orElseThrow().role().wireName()).isEqualTo("prefill");
    }

    @Test
    void aRevokedLeaseTakesTheWorkerOutOfTheRegistry() throws Exception {
        String ns = "revoke";
        DynamoRegistry registry = start(ns, DiscoveryLimits.defaults());
        long kept = EtcdFleet.registerWorker(etcd, ns, 60);
        long revoked = EtcdFleet.registerWorker(etcd, ns, 60);
        await().atMost(CONVERGES).until(() -> ids(registry, ns).size() == 2);
        long generation = registry.snapshot().generation();

        etcd.writer().getLeaseClient().revoke(revoked).get(10, TimeUnit.SECONDS);

        await().atMost(CONVERGES).until(() -> ids(registry, ns).equals(List.of(kept)));
        assertThat(registry.snapshot().generation()).isGreaterThan(generation);
        assertThat(registry.snapshot().connected()).as("a lease revoke is an event, not a fault").isTrue();
    }

    @Test
    void aWorkerCrowdedOutByHostileKeysAtStartupJoinsAsSoonAsTheyAreDeleted() throws Exception {
        String ns = "crowded";
        // Two hostile keys sort before the real worker's and fill a two-key keyspace when the router starts.
        etcd.put(endpointKey(ns, "aaa", "generate", 0xa1), endpoint(ns, "aaa", "generate", 0xa1));
        etcd.put(endpointKey(ns, "aaa", "generate", 0xa2), endpoint(ns, "aaa", "generate", 0xa2));
        etcd.put(endpointKey(ns, "decode", "generate", 0x77), endpoint(ns, "decode", "generate", 0x77));
        DynamoRegistry registry = start(ns, new DiscoveryLimits(DiscoveryLimits.MAX_RECORD_BYTES,
                DiscoveryLimits.MAX_RETAINED_CARD_BYTES, 2));
        await().atMost(CONVERGES).until(() -> registry.snapshot().connected() && ids(registry, ns).size() == 2);
        assertThat(ids(registry, ns)).containsExactly(0xa1L, 0xa2L);
        assertThat(events("refused")).isEqualTo(1.0);

        etcd.delete(endpointKey(ns, "aaa", "generate", 0xa1));
        etcd.delete(endpointKey(ns, "aaa", "generate", 0xa2));

        // No put of the worker's key and no new pass: it is read back as soon as there is room.
        await().atMost(CONVERGES).until(() -> ids(registry, ns).equals(List.of(0x77L)));
        assertThat(events("resync")).isEqualTo(1.0);
        assertThat(events("delete")).isEqualTo(2.0);
    }
}
