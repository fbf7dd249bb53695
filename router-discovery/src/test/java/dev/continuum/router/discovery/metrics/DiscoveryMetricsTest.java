package dev.continuum.router.discovery.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DiscoveryMetricsTest {
    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();

    private static DynamoWorker worker(String namespace, long id, WorkerRole role) {
        Instant t = Instant.parse("2026-09-23T04:11:02Z");
        return new DynamoWorker(new WorkerId(namespace, id), role, role.wireName(), "generate", null, t, t);
    }

    private String scrape() {
        return prometheus.scrape();
    }

    @Test
    void theFamiliesHaveTheSeedsNamesAndEveryKindStartsAtZero() {
        DiscoveryMetrics metrics = DiscoveryMetrics.bind(prometheus, registry);
        String text = scrape();
        for (DiscoveryEventKind kind : DiscoveryEventKind.values()) {
            assertThat(text).contains("continuum_dynamo_discovery_events_total{kind=\"" + kind.label() + "\"} 0.0");
        }
        assertThat(text).contains("continuum_dynamo_discovery_connected 0.0")
                .contains("continuum_dynamo_registry_generation 0.0")
                .doesNotContain("continuum_dynamo_discovery_workers{");
        metrics.increment(DiscoveryEventKind.DUPLICATE);
        assertThat(scrape()).contains("continuum_dynamo_discovery_events_total{kind=\"duplicate\"} 1.0");
    }

    @Test
    void workersAreCountedPerConfiguredNamespaceAndRole() {
        DiscoveryMetrics.bind(prometheus, registry);
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("prod", "canary"), FleetView.empty());
        writer.publish(FleetView.of(List.of(worker("prod", 1, WorkerRole.PREFILL), worker("prod", 2, WorkerRole.DECODE),
                worker("prod", 3, WorkerRole.DECODE), worker("canary", 4, WorkerRole.AGGREGATED)), List.of()));
        writer.setConnected(true);
        String text = scrape();
        assertThat(text).contains("continuum_dynamo_discovery_workers{namespace=\"prod\",role=\"decode\"} 2.0")
                .contains("continuum_dynamo_discovery_workers{namespace=\"prod\",role=\"prefill\"} 1.0")
                .contains("continuum_dynamo_discovery_workers{namespace=\"prod\",role=\"aggregated\"} 0.0")
                .contains("continuum_dynamo_discovery_workers{namespace=\"canary\",role=\"aggregated\"} 1.0")
                .contains("continuum_dynamo_discovery_workers{namespace=\"canary\",role=\"unknown\"} 0.0")
                .contains("continuum_dynamo_discovery_connected 1.0")
                .contains("continuum_dynamo_registry_generation 2.0");
    }

    @Test
    void aNamespaceThatIsNoLongerConfiguredLosesItsSeries() {
        DiscoveryMetrics.bind(prometheus, registry);
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("prod", "canary"), FleetView.empty());
        writer.publish(FleetView.of(List.of(worker("canary", 4, WorkerRole.DECODE)), List.of()));
        registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("prod"), FleetView.empty());
        assertThat(scrape()).doesNotContain("namespace=\"canary\"").contains("namespace=\"prod\"");
        registry.reconfigure(false, DiscoverySourceKind.ETCD, List.of("prod"), FleetView.empty());
        assertThat(scrape()).doesNotContain("continuum_dynamo_discovery_workers{");
    }

    @Test
    void closingRemovesEverySeries() {
        DiscoveryMetrics metrics = DiscoveryMetrics.bind(prometheus, registry);
        registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("prod"), FleetView.empty());
        metrics.close();
        assertThat(scrape()).doesNotContain("continuum_dynamo_");
    }
}
