package dev.continuum.router.discovery.etcd;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.testing.EtcdExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Discovery against a real etcd: leases, kill and restart, compaction, and no writes. */
@Timeout(90)
class EtcdDiscoveryTest {
    @RegisterExtension
    static final EtcdExtension etcd = EtcdExtension.plain();

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private DiscoverySupervisor supervisor;

    private DynamoRegistry start(String namespace) {
        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                .withNamespaces(namespace, List.of())
                .withBackoff(new BackoffConfig(Duration.ofMillis(100), Duration.ofMillis(400)));
        supervisor = DiscoverySupervisor.builder().meterRegistry(meters).seedTimeout(Duration.ofSeconds(5)).build();
        supervisor.start(true, DiscoveryConfig.etcd(config));
        return supervisor.registry();
    }

    @AfterEach
    void stop() {
        if (supervisor != null) {
            supervisor.stop().join();
        }
    }

    private double events(String kind) {
        return meters.get("continuum_dynamo_discovery_events").tag("kind", kind).counter().count();
    }

    @Test
    void aWorkerRegisteredUnderATenSecondLeaseAppearsAndItsExpiryRemovesIt() throws Exception {
        DynamoRegistry registry = start("lease");
        await().until(() -> registry.snapshot().connected());

        long instanceId = EtcdFleet.registerWorker(etcd, "lease", 10);
        await().atMost(Duration.ofSeconds(5)).until(() -> registry.snapshot().worker("lease", instanceId).isPresent());
        DynamoWorker worker = registry.snapshot().worker("lease", instanceId).orElseThrow();
        assertThat(worker.model()).isEqualTo("Qwen/Qwen3-32B");
        assertThat(worker.role().wireName()).isEqualTo("decode");

        // Nobody keeps the lease alive (the router never would): etcd expires it and deletes both keys.
        await().atMost(Duration.ofSeconds(20)).until(() -> registry.snapshot().worker("lease", instanceId).isEmpty());
        assertThat(events("delete")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void killingAndRestartingEtcdMidWatchReconnectsAndResyncs() throws Exception {
        String ns = "restart";
        etcd.put(endpointKey(ns, "decode", "generate", 1), endpoint(ns, "decode", "generate", 1));
        DynamoRegistry registry = start(ns);
        await().until(() -> registry.snapshot().connected() && registry.snapshot().worker(ns, 1).isPresent());
        double resyncs = events("resync");

        etcd.kill();
        await().atMost(Duration.ofSeconds(10)).until(() -> !registry.snapshot().connected());
        assertThat(registry.snapshot().worker(ns, 1)).as("the last view stays readable").isPresent();

        etcd.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> registry.snapshot().connected());
        assertThat(events("resync")).isGreaterThan(resyncs);
        etcd.put(endpointKey(ns, "prefill", "generate", 2), endpoint(ns, "prefill", "generate", 2));
        etcd.delete(endpointKey(ns, "decode", "generate", 1));
        await().until(() -> registry.snapshot().workers().stream().map(DynamoWorker::instanceId).toList()
                .equals(List.of(2L)));
    }

    @Test
    void aWatchFromACompactedRevisionEndsThePassAndAFullResyncRecovers() throws Exception {
        String ns = "compaction";
        etcd.put(endpointKey(ns, "decode", "generate", 1), endpoint(ns, "decode", "generate", 1));
        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint())).withNamespaces(ns, List.of())
                .withBackoff(new BackoffConfig(Duration.ofMillis(50), Duration.ofMillis(200)));
        // Between the range gets and the watches of the first pass, the fleet changes and etcd compacts
        // past the range revision: the watches start from a compacted revision.
        var compactedOnce = new AtomicBoolean();
        supervisor = DiscoverySupervisor.builder().meterRegistry(meters).sourceFactory((c, counters) ->
                new EtcdWatchSource(c.etcd(), e -> new CompactingReader(EtcdReader.connect(e), () -> {
                    if (compactedOnce.compareAndSet(false, true)) {
                        etcd.delete(endpointKey(ns, "decode", "generate", 1));
                        long revision = etcd.put(endpointKey(ns, "decode", "generate", 3), endpoint(ns, "decode", "generate", 3));
                        etcd.compact(revision);
                    }
                }), counters, EtcdPrefixRange.PAGE_LIMIT)).build();
        supervisor.start(true, DiscoveryConfig.etcd(config));
        DynamoRegistry registry = supervisor.registry();

        await().atMost(Duration.ofSeconds(20)).until(() -> registry.snapshot().connected()
                && registry.snapshot().workers().stream().map(DynamoWorker::instanceId).toList().equals(List.of(3L)));
        assertThat(events("resync")).isGreaterThanOrEqualTo(2);
    }

    @Test
    void pagesOfAFewKeysReadTheWholeFleetAtOneRevision() throws Exception {
        String ns = "paged";
        for (long id = 1; id <= 40; id++) {
            etcd.put(endpointKey(ns, "decode", "generate", id), endpoint(ns, "decode", "generate", id));
            etcd.put(channelKey(ns, "decode", "generate", "kv_metrics", 1000 + id),
                    channel(ns, "decode", "generate", "kv_metrics", 1000 + id, "tcp://10.0.0.1:" + (20000 + id)));
        }
        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint())).withNamespaces(ns, List.of());
        EtcdWatchSource source = new EtcdWatchSource(config, EtcdReader::connect, DiscoveryCounters.NONE, 7);
        try (var pass = source.open(Duration.ofSeconds(10))) {
            assertThat(pass.seed()).hasSize(80);
        }
    }

    @Test
    void theRouterNeverWritesRevisionUnchanged() throws Exception {
        String ns = "readonly";
        etcd.put(endpointKey(ns, "decode", "generate", 1), endpoint(ns, "decode", "generate", 1));
        long before = etcd.revision();
        DynamoRegistry registry = start(ns);
        await().until(() -> registry.snapshot().connected() && registry.snapshot().worker(ns, 1).isPresent());
        // A reconnect (with its fresh range gets and watches) writes nothing either.
        supervisor.reload(true, DiscoveryConfig.etcd(EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                .withNamespaces(ns, List.of()).withBackoff(new BackoffConfig(Duration.ofMillis(200), Duration.ofSeconds(1)))));
        await().until(() -> registry.snapshot().connected() && registry.snapshot().worker(ns, 1).isPresent());
        supervisor.stop().join();
        assertThat(etcd.revision()).isEqualTo(before);
    }

    @Test
    void theRealEtcdPathReachesTheSameViewAsThePureReducerAcrossSeveralNamespaces() throws Exception {
        List<String> namespaces = List.of("prod", "ns.one");
        List<DiscoveryEvent> script = new ArrayList<>();
        for (String ns : namespaces) {
            for (long id = 1; id <= 5; id++) {
                String component = id % 2 == 0 ? "decode" : "prefill";
                script.add(DiscoveryEvent.Put.of(
                        endpointKey(ns, component, "generate", id), endpoint(ns, component, "generate", id)));
                script.add(DiscoveryEvent.Put.of(
                        cardKey(ns, component, "generate", id),
                        model(ns, component, "generate", id,
                                card("m-" + ns, component))));
                script.add(DiscoveryEvent.Put.of(
                        channelKey(ns, component, "generate", "kv_metrics", 100 + id),
                        channel(ns, component, "generate", "kv_metrics", 100 + id, "tcp://10.0.0.1:" + (4000 + id))));
            }
            script.add(new DiscoveryEvent.Delete(
                    endpointKey(ns, "decode", "generate", 4)));
        }
        // A namespace that is not watched must not leak in.
        etcd.put(endpointKey("other", "decode", "generate", 9), endpoint("other", "decode", "generate", 9));

        EtcdConfig config = EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint())).withNamespaces("dynamo", namespaces);
        supervisor = DiscoverySupervisor.builder().meterRegistry(meters).build();
        supervisor.start(true, DiscoveryConfig.etcd(config));
        DynamoRegistry registry = supervisor.registry();
        await().until(() -> registry.snapshot().connected());
        for (var event : script) {
            if (event instanceof DiscoveryEvent.Put put) {
                etcd.put(put.key(), new String(put.value(), StandardCharsets.UTF_8));
            } else {
                etcd.delete(((DiscoveryEvent.Delete) event).key());
            }
        }
        var reducer = DiscoveryReducer.create(namespaces,
                Clock.systemUTC(), DiscoveryCounters.NONE);
        reducer.applyAll(script);
        List<String> expected = describe(reducer.view());
        await().atMost(Duration.ofSeconds(10)).until(() -> describe(registry.snapshot().fleet()).equals(expected));
        assertThat(registry.snapshot().workers()).hasSize(8);
        assertThat(registry.snapshot().publishers()).hasSize(10);
    }

    /** Everything but the timestamps, which differ between the two paths by construction. */
    private static List<String> describe(FleetView view) {
        List<String> lines = new ArrayList<>();
        view.workers().forEach(w -> lines.add(w.id() + " " + w.role() + " " + w.component() + " " + w.card()));
        view.publishers().forEach(p -> lines.add(p.id() + " " + p.topic() + " " + p.component() + " " + p.address()));
        return lines;
    }

    /** Runs a hook before the first watch is opened, then reads and watches through the real reader. */
    private static final class CompactingReader implements EtcdReader {
        private final EtcdReader delegate;
        private final ThrowingRunnable beforeWatch;

        interface ThrowingRunnable {
            void run() throws Exception;
        }

        CompactingReader(EtcdReader delegate, ThrowingRunnable beforeWatch) {
            this.delegate = delegate;
            this.beforeWatch = beforeWatch;
        }

        @Override
        public RangePage range(String prefix, byte[] fromKey, long revision, int limit, boolean keysOnly,
                               Duration timeout) throws EtcdReadException, InterruptedException {
            return delegate.range(prefix, fromKey, revision, limit, keysOnly, timeout);
        }

        @Override
        public WatchHandle watch(String prefix, long fromRevision, WatchListener listener) {
            try {
                beforeWatch.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return delegate.watch(prefix, fromRevision, listener);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
