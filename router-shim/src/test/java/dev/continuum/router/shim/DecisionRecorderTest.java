package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Decision records taken from the real pickers over a scripted load store and {@link FixedOverlap} (the radix
 * index is router-kv's; the shim sees it only through {@link PrefixOverlap}): the recorded terms are the formula's
 * as computed by hand, the quality figures follow from them, and a record stays within its byte budget.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DecisionRecorderTest {
    private static final String NS = "dynamo";
    private static final int BS = ShimFleets.BLOCK; // 16
    private static final PromptBlocks PROMPT = prompt(128); // 8 blocks

    private final ScriptedLoad load = new ScriptedLoad();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LoadBasedPicker loadPicker = new LoadBasedPicker(load, load, new SelectionMetrics(registry));
    private final FixedOverlap index = new FixedOverlap();
    private final AtomicReference<KvPickerSettings> kvSettings = new AtomicReference<>(KvPickerSettings.DEFAULTS);
    private double draw = 0.5;
    private final KvAwarePicker picker = new KvAwarePicker(loadPicker, index, kvSettings::get,
            new KvSelectionMetrics(registry), () -> draw);
    private final AtomicReference<DecisionSettings> settings = new AtomicReference<>(DecisionSettings.DEFAULTS);
    private final DecisionLog log = new DecisionLog(settings::get, registry);
    private final DecisionRecorder recorder = new DecisionRecorder(log, () -> 1_700_000_000_000L);

    @AfterEach
    void disarm() {
        DecisionRecorder.disarm();
    }

    private static PromptBlocks prompt(int tokens) {
        long[] hashes = new long[tokens / BS];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = 1000 + i;
        }
        return new PromptBlocks(tokens, List.of(new BlockHashes(BS, hashes)));
    }

    private static WorkerId id(long instance) {
        return new WorkerId(NS, instance);
    }

    private static DynamoSnapshot fed(List<DynamoWorker> workers) {
        DynamoPublisher events = new DynamoPublisher(new PublisherId(NS, 77), PublisherTopic.KV_EVENTS, "backend",
                null, "tcp://127.0.0.1:5557");
        return new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of(NS), 1, true,
                FleetView.of(workers, List.of(events)));
    }

    private DecisionRecord decide(DynamoWorkerPicker p, DynamoSnapshot s, PickRequest request) {
        DecisionSettings armed = recorder.begin();
        Selection sel = p.pick(s, request);
        assertThat(sel).isNotNull();
        long id = recorder.commit(armed, request, sel);
        sel.dispatch().ended();
        DecisionRecord r = log.get(id);
        assertThat(r).isNotNull();
        return r;
    }

    @Test
    void theRecordHoldsTheFormulasTermsAsComputedByHand() {
        // isl 128, bs 16 (8 blocks). Aggregated: prefill tokens from the sample, decode blocks as the backlog.
        //   w1: prefill 0,   decode 40, overlap 0: (0+128)/16 = 8      + 40 + 8 = 56
        //   w2: prefill 320, decode 10, overlap 8: max(0, 28 - 8) = 20 + 10 + 0 = 30
        //   w3: prefill 0,   decode 30, overlap 4: 8 - 4 = 4           + 30 + 4 = 38
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED),
                worker(NS, 3, AGGREGATED)));
        load.sample(id(1), 0, 40L, 0L);
        load.sample(id(2), 0, 10L, 320L);
        load.sample(id(3), 0, 30L, 0L);
        index.hold(2, 0, 8).hold(3, 0, 4);
        DecisionRecord r = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));

        assertThat(r.result()).isEqualTo("overlap");
        assertThat(r.fallback()).isNull();
        assertThat(r.decodeWorker()).isEqualTo(2);
        assertThat(r.prefillWorker()).isEqualTo(-1);
        assertThat(r.decodeReason()).isEqualTo("kv_aware");
        assertThat(r.prompt().promptTokens()).isEqualTo(128);
        assertThat(r.prompt().promptBlocks()).isEqualTo(8);
        assertThat(r.phases()).hasSize(1);
        PhaseTerms phase = r.phases().get(0);
        assertThat(phase.phase()).isEqualTo("aggregated");
        assertThat(phase.omitted()).isZero();
        assertThat(Double.isNaN(phase.temperatureDraw())).isTrue();
        assertThat(phase.winning().workerId()).isEqualTo(2);
        List<RankTerms> c = phase.candidates();
        assertThat(c).extracting(RankTerms::workerId).containsExactly(1L, 2L, 3L);
        assertThat(c).extracting(RankTerms::cost).containsExactly(56.0, 30.0, 38.0);
        assertThat(c).extracting(RankTerms::sampleBacklog).containsExactly(40L, 10L, 30L);
        assertThat(c).extracting(RankTerms::overlapBlocks).containsExactly(0, 8, 4);
        assertThat(c).extracting(RankTerms::creditedPrefill).containsExactly(0.0, 8.0, 4.0);
        assertThat(c).extracting(RankTerms::adjustedPrefill).containsExactly(8.0, 20.0, 4.0);
        assertThat(c).extracting(RankTerms::decodeBlocks).containsExactly(48.0, 10.0, 34.0);
        assertThat(c).extracting(RankTerms::state).containsOnly("fresh");
        assertThat(c).extracting(RankTerms::activeSequences).as("nothing dispatched yet").containsOnly(0L);
        assertThat(r.winnerOverlap()).isEqualTo(8);
        assertThat(r.bestOverlap()).isEqualTo(8);
        assertThat(r.avoidableTokens()).isZero();
        assertThat(registry.get("continuum.dynamo.decision.winner.overlap.blocks").counter().count()).isEqualTo(8);
    }

    @Test
    void aSampledWinnerThatLeftCacheHitsOnTheTableCountsAvoidableTokens() {
        // Equal load, only w2 holds the prompt; at a high temperature a draw of 0 takes the first candidate, w1.
        kvSettings.set(new KvPickerSettings(1.0, 1.0, 100.0, false, null));
        draw = 0.0;
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED)));
        load.sample(id(1), 0, 10L, 0L);
        load.sample(id(2), 0, 10L, 0L);
        index.hold(2, 0, 6);
        DecisionRecord r = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));

        assertThat(r.decodeWorker()).isEqualTo(1);
        assertThat(r.phases().get(0).temperatureDraw()).isEqualTo(0.0);
        assertThat(r.winnerOverlap()).isZero();
        assertThat(r.bestOverlap()).isEqualTo(6);
        assertThat(r.avoidableTokens()).isEqualTo(6 * BS);
        assertThat(log.totals().avoidableTokens()).isEqualTo(6 * BS);
        // A rank with more prefill work queued is busier: its cache is not counted as avoidable (w1 now also carries
        // its first dispatch's 128 prompt tokens in the ledger until a newer sample: 128 against 320).
        load.sample(id(2), 0, 10L, 320L);
        assertThat(decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT)).avoidableTokens()).isZero();
    }

    /**
     * At temperature 0 a rank holding the prompt can still lose on its decode backlog: with no more prefill work
     * queued than the winner, what it held counts as avoidable (the trade the formula made, for the operator to see).
     */
    @Test
    void aCachedRankThatLostOnItsDecodeBacklogCountsAvoidableTokens() {
        // isl 128, bs 16. w1: prefill 0, decode 10, overlap 0: 8 + 10 + 8 = 26.
        //                 w2: prefill 0, decode 100, overlap 6: max(0, 8 - 6) = 2 + 100 + 2 = 104.
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED)));
        load.sample(id(1), 0, 10L, 0L);
        load.sample(id(2), 0, 100L, 0L);
        index.hold(2, 0, 6);
        DecisionRecord r = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));

        assertThat(r.decodeWorker()).isEqualTo(1);
        assertThat(Double.isNaN(r.phases().get(0).temperatureDraw())).isTrue();
        assertThat(r.bestOverlap()).isEqualTo(6);
        assertThat(r.avoidableTokens()).isEqualTo(6 * BS);
    }

    @Test
    void disaggregatedDecisionsRecordBothPhasesAndFallbacksTheirReason() {
        DynamoSnapshot s = fed(List.of(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL)));
        load.sample(id(1), 0, 500L, null);
        load.sample(id(2), 0, 100L, null);
        load.sample(id(3), 0, null, 0L);
        load.sample(id(4), 0, null, 0L);
        index.hold(4, 0, 8);
        DecisionRecord r = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        assertThat(r.phases()).extracting(PhaseTerms::phase).containsExactly("decode_load", "prefill");
        assertThat(r.decodeWorker()).isEqualTo(2);
        assertThat(r.prefillWorker()).isEqualTo(4);
        assertThat(r.winnerOverlap()).isEqualTo(8);

        DecisionRecord fallback = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, null,
                KvSelectionResult.RENDER_UNAVAILABLE));
        assertThat(fallback.result()).isEqualTo("render_unavailable");
        assertThat(fallback.fallback()).isEqualTo("render_unavailable");
        assertThat(fallback.prompt().promptTokens()).isEqualTo(-1);
        assertThat(fallback.phases()).extracting(PhaseTerms::phase).containsExactly("decode_load", "prefill_load");
        assertThat(log.totals().byResult()).containsEntry("render_unavailable", 1L).containsEntry("overlap", 1L);
    }

    @Test
    void aRecordKeepsTheWinnerAndTheCheapestCandidatesWithinItsByteBudget() {
        // 64 KiB over 16 records: 4096 bytes each, room for (4096 - 752) / 120 = 27 candidates, fewer than the
        // 1 + 64 candidates_per_phase allows.
        settings.set(new DecisionSettings(true, 16, 64 * 1024, 64));
        int budget = settings.get().candidatesPerRecord();
        assertThat(budget).isEqualTo(27);
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            workers.add(worker(NS, i, AGGREGATED));
            load.sample(id(i), 0, (long) (100 - i), 0L); // the last worker is the least loaded
        }
        DynamoSnapshot s = fed(workers);
        DecisionRecord r = decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        PhaseTerms phase = r.phases().get(0);
        assertThat(phase.candidates()).hasSize(budget);
        assertThat(phase.omitted()).isEqualTo(40 - budget);
        assertThat(phase.winning().workerId()).isEqualTo(40);
        // The kept ones are the cheapest: workers 14..40.
        assertThat(phase.candidates()).extracting(RankTerms::workerId).allMatch(w -> w >= 14);
        assertThat(r.estimatedBytes()).isLessThanOrEqualTo((int) settings.get().bytesPerRecord());
        for (int i = 0; i < 40; i++) {
            decide(picker, s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        }
        assertThat(log.totals().heldBytes()).isLessThanOrEqualTo(settings.get().maxBytes());
    }

    @Test
    void theLoadOnlyPickerIsRecordedToo() {
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED)));
        load.sample(id(1), 0, 40L, null);
        load.sample(id(2), 0, 10L, null);
        DecisionRecord r = decide(loadPicker, s, new PickRequest(MODEL, Set.of(NS), 64));
        assertThat(r.result()).isEqualTo("load");
        assertThat(r.decodeReason()).isEqualTo("load");
        PhaseTerms phase = r.phases().get(0);
        assertThat(phase.phase()).isEqualTo("decode_load");
        assertThat(phase.winning().workerId()).isEqualTo(2);
        assertThat(phase.candidates()).extracting(RankTerms::sampleBacklog).containsExactly(40L, 10L);
        assertThat(phase.candidates().get(0).cost()).isGreaterThan(phase.candidates().get(1).cost());
    }

    /**
     * The load-only prefill cost uses the larger of sample plus ledger and this router's active sequences: the record
     * shows the active sequences the picker read, and the winner's work for the TTFT prediction is the backlog the
     * cost used, not the sample and ledger alone.
     */
    @Test
    void aLoadOnlyPrefillPhaseRecordsTheActiveSequencesItsCostUsed() {
        DynamoSnapshot s = fed(List.of(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL)));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, null, 100L);
        load.sample(id(3), 0, null, 5_000L);
        PickRequest request = new PickRequest(MODEL, Set.of(NS), 1_000);
        Selection first = loadPicker.pick(s, request); // to worker 2, left open: 1,000 active prefill tokens there
        assertThat(first).isNotNull();
        assertThat(first.prefill().worker().instanceId()).isEqualTo(2);
        load.advance(java.time.Duration.ofMillis(1));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, null, 0L); // answers the ledger; the request is still in flight
        load.sample(id(3), 0, null, 5_000L);

        DecisionRecord r = decide(loadPicker, s, request);
        first.dispatch().ended();
        PhaseTerms prefill = r.phases().get(1);
        assertThat(prefill.phase()).isEqualTo("prefill_load");
        RankTerms w2 = prefill.candidates().get(0);
        assertThat(w2.workerId()).isEqualTo(2);
        assertThat(prefill.winning()).isEqualTo(w2);
        assertThat(w2.sampleBacklog()).isZero();
        assertThat(w2.ledgerTokens()).isZero();
        assertThat(w2.activeSequences()).isEqualTo(1_000);
        assertThat(prefill.candidates().get(1).activeSequences()).isZero();
        // Its work: the 1,000 tokens the cost counted ahead of the request, and the request's own 1,000.
        assertThat(r.ttft()).isNotNull();
        assertThat(r.ttft().workTokens()).isEqualTo(2_000);
    }

    /**
     * A rank with no active sequence of this router costs its sample alone, so the scoring pass does not read its
     * ledger; a record that keeps it reads the ledger then: the unanswered blocks of a request that already ended.
     */
    @Test
    void aKeptCandidatesLedgerIsReadEvenWhenItsCostDidNotNeedIt() {
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED)));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 40L, null);
        PickRequest request = new PickRequest(MODEL, Set.of(NS), 64);
        Selection first = loadPicker.pick(s, request);
        assertThat(first).isNotNull();
        assertThat(first.decode().worker().instanceId()).isEqualTo(1);
        first.dispatch().ended(); // nothing of ours runs there now; no sample has answered its 4 blocks yet

        DecisionRecord r = decide(loadPicker, s, request);
        RankTerms w1 = r.phases().get(0).candidates().get(0);
        assertThat(w1.workerId()).isEqualTo(1);
        assertThat(w1.activeSequences()).isZero();
        assertThat(w1.ledgerBlocks()).isEqualTo(4);
        assertThat(r.phases().get(0).candidates().get(1).ledgerBlocks()).isZero();
    }

    @Test
    void recordingOffKeepsNothingAndTheStagingStaysIdle() {
        settings.set(new DecisionSettings(false, 16, 64 * 1024));
        DynamoSnapshot s = fed(List.of(worker(NS, 1, AGGREGATED)));
        DecisionSettings armed = recorder.begin();
        Selection sel = picker.pick(s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        assertThat(sel).isNotNull();
        assertThat(LoadBasedPicker.scratch().staging.phases).isZero();
        assertThat(recorder.commit(armed, new PickRequest(MODEL, Set.of(NS), 64, PROMPT), sel)).isEqualTo(-1);
        assertThat(log.totals().recorded()).isZero();
    }
}
