package dev.continuum.router.discovery.kubernetes;

import static dev.continuum.router.discovery.kubernetes.Pods.DYN_NS;
import static dev.continuum.router.discovery.kubernetes.Pods.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.config.KubernetesConfig;
import dev.continuum.router.discovery.kubernetes.PodClassifier.Ready;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Pod rules that need no server: readiness, roles, and IDs claimed by two Pods. */
@Timeout(10)
class PodFleetTest {
    private static final KubernetesConfig CONFIG = new KubernetesConfig(Pods.NS, DYN_NS, List.of(), "m", List.of(),
            BackoffConfig.defaults());
    private final List<DiscoveryEventKind> counted = new ArrayList<>();
    private final PodFleet fleet = new PodFleet(16_384, counted::add, new PodFleet.Memory());

    @Test
    void readinessNeedsRunningReadyAndNoDeletionTimestamp() {
        Pod ready = worker("w-0", "decode", null, "c", true);
        assertThat(PodClassifier.ready(ready)).isTrue();
        assertThat(PodClassifier.ready(worker("w-0", "decode", null, "c", false))).isFalse();
        assertThat(PodClassifier.ready(new PodBuilder(ready).editStatus().withPhase("Pending").endStatus().build()))
                .isFalse();
        assertThat(PodClassifier.ready(new PodBuilder(ready).editMetadata()
                .withDeletionTimestamp("2026-12-01T00:00:00Z").endMetadata().build())).isFalse();
        assertThat(PodClassifier.ready(new PodBuilder(ready).editStatus().withConditions(List.of()).endStatus()
                .build())).isFalse();
    }

    @Test
    void rolesComeFromTheComponentTypeOrTheWorkersSubType() {
        assertThat(PodClassifier.role("prefill", null)).isEqualTo(WorkerRole.PREFILL);
        assertThat(PodClassifier.role("decode", "prefill")).isEqualTo(WorkerRole.DECODE);
        assertThat(PodClassifier.role("worker", "prefill")).isEqualTo(WorkerRole.PREFILL);
        assertThat(PodClassifier.role("worker", "decode")).isEqualTo(WorkerRole.DECODE);
        assertThat(PodClassifier.role("worker", null)).isEqualTo(WorkerRole.AGGREGATED);
        assertThat(PodClassifier.role("worker", "something-else")).isEqualTo(WorkerRole.AGGREGATED);
        for (String skipped : List.of("frontend", "planner", "epp", "default", "")) {
            assertThat(PodClassifier.role(skipped, null)).isNull();
        }
        assertThat(PodClassifier.role(null, null)).isNull();
    }

    @Test
    void twoReadyPodsWithOneIdAreBothRefusedAndCountedOnce() {
        // Real names almost never collide in 53 bits; the rule is about the ID, so the classes share one here.
        List<DiscoveryEvent> first = fleet.update("pod-a", new Ready(DYN_NS, 42, "c", WorkerRole.DECODE, "m"));
        assertThat(first).extracting(e -> ((DiscoveryEvent.Put) e).key()).containsExactly(
                "v1/instances/" + DYN_NS + "/c/generate/2a", "v1/mdc/" + DYN_NS + "/c/generate/2a");
        List<DiscoveryEvent> second = fleet.update("pod-b", new Ready(DYN_NS, 42, "c", WorkerRole.DECODE, "m"));
        assertThat(second).containsExactly(new DiscoveryEvent.Delete("v1/instances/" + DYN_NS + "/c/generate/2a"),
                new DiscoveryEvent.Delete("v1/mdc/" + DYN_NS + "/c/generate/2a"));
        assertThat(fleet.records()).isEmpty();
        fleet.update("pod-b", new Ready(DYN_NS, 42, "c", WorkerRole.DECODE, "m"));
        assertThat(counted).containsExactly(DiscoveryEventKind.DUPLICATE);

        // When one of them goes, the other is published again.
        List<DiscoveryEvent> back = fleet.update("pod-a", null);
        assertThat(back).hasSize(2).allMatch(e -> e instanceof DiscoveryEvent.Put);
        assertThat(fleet.records()).hasSize(2);
    }

    @Test
    void theRecordsCarryTheModelAndTheLabelRoleForTheReducer() {
        Pod pod = worker("worker-0", "worker", "prefill", "VllmPrefillWorker", true);
        List<DiscoveryEvent> events = fleet.update("worker-0", PodClassifier.classify(pod, CONFIG));
        String card = new String(((DiscoveryEvent.Put) events.get(1)).value(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(((DiscoveryEvent.Put) events.get(0)).key()).isEqualTo("v1/instances/" + DYN_NS
                + "/VllmPrefillWorker/generate/43710f49c0cff");
        assertThat(card).isEqualTo("{\"type\":\"Model\",\"instance_id\":1186445869714687,\"component\":"
                + "\"VllmPrefillWorker\",\"endpoint\":\"generate\",\"card_json\":{\"display_name\":\"m\","
                + "\"worker_type\":\"Prefill\"}}");
    }

    @Test
    void podsRefusedAtTheCapAreAdmittedOldestFirstAsSoonAsAHeldPodGoes() {
        PodFleet small = new PodFleet(2, counted::add, new PodFleet.Memory());
        small.update("a", new Ready(DYN_NS, 1, "c", WorkerRole.DECODE, "m"));
        small.update("b", new Ready(DYN_NS, 2, "c", WorkerRole.DECODE, "m"));
        assertThat(small.update("z", new Ready(DYN_NS, 26, "c", WorkerRole.DECODE, "m"))).isEmpty();
        assertThat(small.update("y", new Ready(DYN_NS, 25, "c", WorkerRole.DECODE, "m"))).isEmpty();
        assertThat(counted).containsExactly(DiscoveryEventKind.REFUSED, DiscoveryEventKind.REFUSED);

        // a goes: z, refused first, comes in with the same events; y still waits.
        assertThat(small.update("a", null)).extracting(DiscoveryEventTest::key).containsExactly(
                "v1/instances/" + DYN_NS + "/c/generate/1", "v1/mdc/" + DYN_NS + "/c/generate/1",
                "v1/instances/" + DYN_NS + "/c/generate/1a", "v1/mdc/" + DYN_NS + "/c/generate/1a");
        small.update("y", null); // deleted while waiting: forgotten
        assertThat(small.update("b", null)).extracting(DiscoveryEventTest::key).containsExactly(
                "v1/instances/" + DYN_NS + "/c/generate/2", "v1/mdc/" + DYN_NS + "/c/generate/2");
        assertThat(small.size()).isEqualTo(1);
    }

    private static final class DiscoveryEventTest {
        static String key(DiscoveryEvent event) {
            return event instanceof DiscoveryEvent.Put put ? put.key() : ((DiscoveryEvent.Delete) event).key();
        }
    }
}
