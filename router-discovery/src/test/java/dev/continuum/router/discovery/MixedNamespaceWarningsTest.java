package dev.continuum.router.discovery;

import static dev.continuum.router.discovery.Fleets.fleet;
import static dev.continuum.router.discovery.Fleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class MixedNamespaceWarningsTest {
    @Test
    void aggregatedWorkersBesideDecodeWorkersOfOneModelWarnOnceWithTheCounts() {
        MixedNamespaceWarnings warnings = new MixedNamespaceWarnings();
        FleetView mixed = fleet(worker("prod", 1, WorkerRole.AGGREGATED, "m"), worker("prod", 2, WorkerRole.DECODE, "m"),
                worker("prod", 3, WorkerRole.DECODE, "m"), worker("prod", 4, WorkerRole.PREFILL, "m"));
        assertThat(warnings.check(mixed)).singleElement().asString()
                .contains("'prod'").contains("'m'").contains("prefill=1").contains("decode=2").contains("aggregated=1");
        assertThat(warnings.check(mixed)).as("not repeated while it stays mixed").isEmpty();
    }

    @Test
    void aNamespaceThatStopsBeingMixedWarnsAgainWhenItMixesAgain() {
        MixedNamespaceWarnings warnings = new MixedNamespaceWarnings();
        FleetView mixed = fleet(worker("prod", 1, WorkerRole.AGGREGATED, "m"), worker("prod", 2, WorkerRole.PREFILL, "m"));
        warnings.check(mixed);
        assertThat(warnings.check(fleet(worker("prod", 2, WorkerRole.PREFILL, "m")))).isEmpty();
        assertThat(warnings.check(mixed)).hasSize(1);
    }

    @Test
    void differentModelsOrNamespacesDoNotMix() {
        MixedNamespaceWarnings warnings = new MixedNamespaceWarnings();
        assertThat(warnings.check(fleet(worker("prod", 1, WorkerRole.AGGREGATED, "a"),
                worker("prod", 2, WorkerRole.DECODE, "b"), worker("canary", 3, WorkerRole.PREFILL, "a"),
                worker("prod", 4, WorkerRole.UNKNOWN, "b"), worker("prod", 5, WorkerRole.AGGREGATED, null),
                worker("prod", 6, WorkerRole.DECODE, null)))).isEmpty();
    }

    @Test
    void onePublishNamesAtMostEightPairsAndSummarizesTheRest() {
        MixedNamespaceWarnings warnings = new MixedNamespaceWarnings();
        List<DynamoWorker> workers = new ArrayList<>();
        for (int model = 0; model < 11; model++) {
            workers.add(worker("prod", model * 2L, WorkerRole.AGGREGATED, "model-" + model));
            workers.add(worker("prod", model * 2L + 1, WorkerRole.DECODE, "model-" + model));
        }
        List<String> lines = warnings.check(FleetView.of(workers, List.of()));
        assertThat(lines).hasSize(9);
        assertThat(lines.get(8)).startsWith("3 more (namespace, model) pairs").contains("8 shown");
        assertThat(warnings.check(FleetView.of(workers, List.of()))).isEmpty();
    }

    @Test
    void theRegistryWarnsWhenAPublishMixesANamespace() {
        try (var logs = dev.continuum.router.testing.LogCapture.of(MixedNamespaceWarnings.class)) {
            MutableDynamoRegistry registry = MutableDynamoRegistry.create();
            var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("prod"), FleetView.empty());
            writer.publish(fleet(worker("prod", 1, WorkerRole.AGGREGATED, "m")));
            writer.publish(fleet(worker("prod", 1, WorkerRole.AGGREGATED, "m"), worker("prod", 2, WorkerRole.DECODE, "m")));
            writer.publish(fleet(worker("prod", 1, WorkerRole.AGGREGATED, "m"), worker("prod", 2, WorkerRole.DECODE, "m"),
                    worker("prod", 3, WorkerRole.DECODE, "m")));
            assertThat(logs.warnings()).hasSize(1);
        }
    }
}
