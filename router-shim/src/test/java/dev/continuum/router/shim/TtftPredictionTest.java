package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.TtftModel;
import dev.continuum.router.shim.decisions.TtftPrediction;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The predicted time to first token in a decision record: work tokens from the picker's terms, the rank's rate
 * learned from the first bytes a plan's listener reports (on an injected clock), the fleet's rate for a rank not
 * seen yet, and the observed over predicted ratio in {@code continuum_dynamo_decision_ttft_ratio}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TtftPredictionTest {
    private static final String NS = "dynamo";
    private static final long MS = 1_000_000L;

    private final ScriptedLoad load = new ScriptedLoad();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LoadBasedPicker loadPicker = new LoadBasedPicker(load, load, new SelectionMetrics(registry));
    private final FixedOverlap index = new FixedOverlap();
    private final KvAwarePicker picker = new KvAwarePicker(loadPicker, index, () -> KvPickerSettings.DEFAULTS,
            new KvSelectionMetrics(registry), () -> 0.5);
    private final AtomicLong clock = new AtomicLong(1_000 * MS);
    private final DecisionLog log = new DecisionLog(() -> DecisionSettings.DEFAULTS, registry, clock::get);
    private final DecisionRecorder recorder = new DecisionRecorder(log, () -> 1_700_000_000_000L);
    private final DisaggregatedMetrics metrics = new DisaggregatedMetrics(registry);

    @AfterEach
    void disarm() {
        DecisionRecorder.disarm();
    }

    private static PromptBlocks prompt(int tokens) {
        long[] hashes = new long[tokens / ShimFleets.BLOCK];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = 1000 + i;
        }
        return new PromptBlocks(tokens, List.of(new BlockHashes(ShimFleets.BLOCK, hashes)));
    }

    /** One routed request: picked, recorded, then its plan's listener told of the first bytes after {@code ms}. */
    private DecisionRecord route(DynamoSnapshot s, long ms) {
        PickRequest request = new PickRequest(MODEL, Set.of(NS), 64, prompt(128));
        DecisionSettings armed = recorder.begin();
        Selection sel = picker.pick(s, request);
        assertThat(sel).isNotNull();
        long id = recorder.commit(armed, request, sel);
        DispatchPlan.Listener listener = new PlanEnding(sel.dispatch(), RoutingPath.UNIFIED, metrics, log, id);
        clock.addAndGet(ms * MS);
        listener.firstBytes();
        listener.firstBytes(); // a second report (never sent by the proxy) changes nothing
        listener.ended(DispatchPlan.Outcome.SERVED);
        DecisionRecord r = log.get(id);
        assertThat(r).isNotNull();
        return r;
    }

    private DistributionSummary ratio(String basis) {
        return registry.get("continuum.dynamo.decision.ttft.ratio").tag("basis", basis).summary();
    }

    @Test
    void theRankLearnsItsRateFromFirstBytesAndPredictsTheNextRequest() {
        DynamoPublisher events = new DynamoPublisher(new PublisherId(NS, 77), PublisherTopic.KV_EVENTS, "backend",
                null, "tcp://127.0.0.1:5557");
        DynamoSnapshot s = new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of(NS), 1, true,
                FleetView.of(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED)), List.of(events)));
        // Worker 2 holds the whole prompt (8 blocks) behind 192 queued prefill tokens; worker 1 is far busier.
        load.sample(new WorkerId(NS, 1), 0, 400L, 0L);
        load.sample(new WorkerId(NS, 2), 0, 10L, 192L);
        index.hold(2, 0, 8);

        DecisionRecord first = route(s, 24);
        TtftPrediction p = first.ttft();
        assertThat(p).isNotNull();
        assertThat(p.workerId()).isEqualTo(2);
        assertThat(p.workTokens()).isEqualTo(192); // its backlog; the prompt itself was cached there
        assertThat(p.basis()).isEqualTo(TtftModel.Basis.NONE); // nothing learned yet
        assertThat(p.predictedNanos()).isEqualTo(-1);
        assertThat(p.observedNanos()).isEqualTo(24 * MS);
        assertThat(log.ttftModel().rate(2, 0)).isCloseTo(192 / 0.024, within(1e-6)); // 8,000 tokens a second

        DecisionRecord second = route(s, 48);
        TtftPrediction q = second.ttft();
        assertThat(q).isNotNull();
        assertThat(q.basis()).isEqualTo(TtftModel.Basis.RANK);
        assertThat(q.predictedNanos()).isEqualTo(24 * MS);
        assertThat(q.observedNanos()).isEqualTo(48 * MS);
        assertThat(ratio("rank").count()).isEqualTo(1);
        assertThat(ratio("rank").totalAmount()).isCloseTo(2.0, within(1e-9));
        assertThat(ratio("fleet").count()).isZero();
        // The rate moves a fifth of the way to this observation's 4,000 tokens a second.
        assertThat(log.ttftModel().rate(2, 0)).isCloseTo(8000 + 0.2 * (4000 - 8000), within(1e-6));
    }

    @Test
    void aRankNotSeenYetIsPredictedAtTheFleetsRate() {
        TtftModel model = new TtftModel();
        assertThat(model.fleetRate()).isNaN();
        model.learn(11, 0, 1_000, 100 * MS); // 10,000 tokens a second
        TtftPrediction known = model.predict(11, 0, 500, 0);
        assertThat(known.basis()).isEqualTo(TtftModel.Basis.RANK);
        assertThat(known.predictedNanos()).isEqualTo(50 * MS);
        TtftPrediction stranger = model.predict(12, 3, 2_000, 0);
        assertThat(stranger.basis()).isEqualTo(TtftModel.Basis.FLEET);
        assertThat(stranger.predictedNanos()).isEqualTo(200 * MS);
        model.learn(11, 0, 0, 5 * MS); // nothing prefilled: teaches nothing
        assertThat(model.rate(11, 0)).isCloseTo(10_000, within(1e-9));
    }

    @Test
    void manyRanksStayWithinTheTableAndTheRestUseTheFleetsRate() {
        TtftModel model = new TtftModel();
        for (long w = 0; w < 40_000; w++) {
            model.learn(w, (int) (w % 8), 1_000, 100 * MS);
        }
        long learned = 0;
        for (long w = 0; w < 40_000; w++) {
            if (!Double.isNaN(model.rate(w, (int) (w % 8)))) {
                learned++;
            }
        }
        assertThat(learned).isPositive().isLessThanOrEqualTo(16_384);
        assertThat(model.predict(99_999, 1, 1_000, 0).basis()).isEqualTo(TtftModel.Basis.FLEET);
    }
}
