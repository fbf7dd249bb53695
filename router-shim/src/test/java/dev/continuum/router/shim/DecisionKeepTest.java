package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code dynamo.decisions.candidates_per_phase}: a phase keeps its winner and the K cheapest other eligible
 * candidates, in the picker's order, and counts the rest as omitted; the quality figures still see every candidate.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DecisionKeepTest {
    private static final String NS = "dynamo";

    @AfterEach
    void disarm() {
        DecisionRecorder.disarm();
    }

    /**
     * The candidates a phase with these costs (NaN: no cost) keeps when it holds up to {@code cap} others during
     * capture and a record emits {@code others} of them; all are eligible unless listed in {@code ineligible}. The
     * offers are what {@link DecisionCapture} makes: eligible non-winners with a cost that the heap admits.
     */
    private static int[] kept(int winner, double[] costs, int cap, int others, int[] ineligible) {
        DecisionStaging.Phase p = new DecisionStaging.Phase();
        p.n = costs.length;
        p.winner = winner;
        p.start(cap);
        for (int k = 0; k < costs.length; k++) {
            int at = k;
            if (k != winner && !Double.isNaN(costs[k]) && Arrays.stream(ineligible).noneMatch(i -> i == at)
                    && p.admits(costs[k])) {
                p.offer(k, costs[k]);
            }
        }
        p.finish();
        int size = p.emit(others);
        int[] out = new int[size];
        for (int j = 0; j < size; j++) {
            out[j] = p.position[p.emitted[j]];
        }
        return out;
    }

    private static final int[] SEVEN = {7};

    @Test
    void theWinnerAndTheCheapestEligibleOthersAreKeptInThePickersOrder() {
        //                    0    1    2    3         4    5    6    7    8
        double[] costs = {9.0, 2.0, 7.0, Double.NaN, 1.0, 3.0, 2.0, 0.5, 8.0};
        // Winner 8 is the dearest (a temperature draw); 7 is the cheapest but ineligible, 3 has no cost.
        assertThat(kept(8, costs, 3, 3, SEVEN)).containsExactly(1, 4, 6, 8); // costs 2.0, 1.0, 2.0, winner
        assertThat(kept(8, costs, 2, 2, SEVEN)).containsExactly(1, 4, 8); // of the tied 2.0s, the earlier one
        assertThat(kept(8, costs, 0, 0, SEVEN)).containsExactly(8);
        // Captured with room for 64, emitted with fewer (a two-phase record's share): the same choice.
        assertThat(kept(8, costs, 64, 2, SEVEN)).containsExactly(1, 4, 8);
        // More room than eligible, costed candidates: all of them, never the ineligible or uncosted ones.
        assertThat(kept(8, costs, 64, 64, SEVEN)).containsExactly(0, 1, 2, 4, 5, 6, 8);
    }

    @Test
    void keepingAgreesWithSortingOnManyCandidates() {
        java.util.Random random = new java.util.Random(33);
        for (int round = 0; round < 200; round++) {
            int n = 1 + random.nextInt(300);
            double[] costs = new double[n];
            for (int k = 0; k < n; k++) {
                costs[k] = random.nextInt(50); // many ties
            }
            int winner = random.nextInt(n);
            int others = random.nextInt(65);
            int cap = others + random.nextInt(65 - others);
            List<Integer> expected = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                if (k != winner) {
                    expected.add(k);
                }
            }
            expected.sort((a, b) -> costs[a] != costs[b] ? Double.compare(costs[a], costs[b]) : Integer.compare(a, b));
            List<Integer> want = new ArrayList<>(expected.subList(0, Math.min(others, expected.size())));
            want.add(winner);
            want.sort(null);
            assertThat(kept(winner, costs, cap, others, new int[0])).as("round %d", round)
                    .containsExactly(want.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    @Test
    void aRecordKeepsKCandidatesAPhaseAndCountsTheRest() {
        ScriptedLoad load = new ScriptedLoad();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LoadBasedPicker picker = new LoadBasedPicker(load, load, new SelectionMetrics(registry));
        AtomicReference<DecisionSettings> settings =
                new AtomicReference<>(new DecisionSettings(true, 16, 1024 * 1024, 3));
        DecisionLog log = new DecisionLog(settings::get, registry);
        DecisionRecorder recorder = new DecisionRecorder(log, () -> 1_700_000_000_000L);
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            workers.add(worker(NS, i, AGGREGATED));
            // Backlogs out of order: (i * 17) % 40 puts the least loaded at worker 40 (0), then 33 (1), 26 (2) ...
            load.sample(new WorkerId(NS, i), 0, (long) ((i * 17) % 40), null);
        }
        DynamoSnapshot s = new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of(NS), 1, true,
                FleetView.of(workers, List.of()));
        PickRequest request = new PickRequest(MODEL, Set.of(NS), 64);

        DecisionSettings armed = recorder.begin();
        Selection sel = picker.pick(s, request);
        assertThat(sel).isNotNull();
        DecisionRecord r = log.get(recorder.commit(armed, request, sel));
        assertThat(r).isNotNull();
        PhaseTerms phase = r.phases().get(0);
        assertThat(phase.winning().workerId()).isEqualTo(40);
        // Worker i's backlog is (17 i) mod 40: 1 at worker 33, 2 at 26, 3 at 19; picker order is by worker.
        assertThat(phase.candidates()).extracting(RankTerms::workerId).containsExactly(19L, 26L, 33L, 40L);
        assertThat(phase.omitted()).isEqualTo(36);
        assertThat(r.estimatedBytes()).isEqualTo(DecisionRecord.BASE_BYTES + 4 * RankTerms.ESTIMATED_BYTES);

        settings.set(new DecisionSettings(true, 16, 1024 * 1024, 0)); // hot: the next pick keeps the winner only
        armed = recorder.begin();
        sel = picker.pick(s, request);
        assertThat(sel).isNotNull();
        DecisionRecord only = log.get(recorder.commit(armed, request, sel));
        assertThat(only).isNotNull();
        assertThat(only.phases().get(0).candidates()).hasSize(1);
        assertThat(only.phases().get(0).winning().workerId()).isEqualTo(sel.decode().worker().instanceId());
        assertThat(only.phases().get(0).omitted()).isEqualTo(39);
    }
}
