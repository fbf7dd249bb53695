package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.discovery.WorkerRole.UNKNOWN;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.snapshot;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.wire.ActiveLoad;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoadBasedPickerTest {
    private static final String NS = "dynamo";
    /** 64 tokens: 4 blocks of 16, enough for the stall rule's "two or more blocks". */
    private static final long EST = 64;

    private final ScriptedLoad load = new ScriptedLoad();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LoadBasedPicker picker =
            (LoadBasedPicker) DynamoWorkerPicker.loadBased(load, load, registry);

    private static WorkerId id(long instance) {
        return new WorkerId(NS, instance);
    }

    private Selection pick(DynamoSnapshot snapshot) {
        return pick(snapshot, Set.of(NS));
    }

    private Selection pick(DynamoSnapshot snapshot, Set<String> namespaces) {
        Selection s = picker.pick(snapshot, new PickRequest(MODEL, namespaces, EST));
        assertThat(s).isNotNull();
        return s;
    }

    private List<Long> decodeIds(DynamoSnapshot snapshot, int times) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            out.add(pick(snapshot).decode().worker().instanceId());
        }
        return out;
    }

    private double selections(String role, String reason) {
        return registry.get(SelectionMetrics.SELECTIONS).tag("role", role).tag("reason", reason).counter().count();
    }

    // --- Selection: the cost formulas ---------------------------------------------------------------------

    @Test
    void prefillCostIsActivePrefillTokensOverMaxNumBatchedTokens() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, null, 500L);
        load.sample(id(3), 0, null, 100L);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(1));
        assertThat(sel.prefill()).isNotNull();
        assertThat(sel.prefill().worker()).isEqualTo(id(3));
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.LOAD);
    }

    @Test
    void decodeCostAddsThePromptsBlocksOverTotalKvBlocks() {
        // Same backlog, different capacity: 10 + 4 blocks of 1000 beats 10 + 4 of 100.
        ModelCard small = new ModelCard(MODEL, null, false, 16, new ModelCard.WorkerCapacity(100L, 1000L, null,
                null), null, null, null, ModelCard.CardArtifacts.NONE, null, null);
        DynamoWorker tiny = new DynamoWorker(id(1), DECODE, "decode", "generate", small, ShimFleets.T0,
                ShimFleets.T0);
        DynamoSnapshot s = snapshot(tiny, worker(NS, 2, DECODE));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 10L, null);
        assertThat(pick(s).decode().worker()).isEqualTo(id(2));
    }

    @Test
    void activeDecodeBlocksFallsBackToKvUsedBlocksWhenNil() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, new ActiveLoad(1, 0, null, null, null, 300L));
        load.sample(id(2), 0, new ActiveLoad(2, 0, null, null, null, 200L));
        assertThat(decodeIds(s, 3)).containsOnly(2L);
    }

    @Test
    void aWorkerReportingACounterNearTwoToTheSixtyFourNeverWinsOnCost() {
        // Decoded from wire bytes: kv_used_blocks = 2^64-1 and active_prefill_tokens = 2^63 (uint 64).
        ActiveLoad huge = decoded("83 a9776f726b65725f6964 01 ae6b765f757365645f626c6f636b73 cfffffffffffffffff"
                + " b56163746976655f70726566696c6c5f746f6b656e73 cf8000000000000000");
        assertThat(huge.kvUsedBlocks()).isEqualTo(Long.MAX_VALUE);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        load.sample(id(1), 0, huge);
        load.sample(id(2), 0, new ActiveLoad(2, 0, null, 0L, null, 900L));
        load.sample(id(3), 0, new ActiveLoad(3, 0, null, huge.activePrefillTokens(), null, null));
        load.sample(id(4), 0, new ActiveLoad(4, 0, null, 999L, null, null));
        for (int i = 0; i < 5; i++) {
            Selection sel = pick(s);
            assertThat(sel.decode().worker().instanceId()).isEqualTo(2);
            assertThat(sel.prefill().worker().instanceId()).isEqualTo(4);
            assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
        }
        // Two saturated ranks tie at the largest cost; with nothing smaller they rotate and still win on load.
        load.sample(id(2), 0, huge);
        assertThat(decodeIds(s, 4)).containsOnly(1L, 2L).contains(1L, 2L);
    }

    private static ActiveLoad decoded(String hex) {
        var d = dev.continuum.router.load.wire.ActiveLoadDecoder.decode(
                java.util.HexFormat.of().parseHex(hex.replace(" ", "")));
        return ((dev.continuum.router.eventplane.wire.Decoded.Ok<ActiveLoad>) d).value();
    }

    @Test
    void aPickAllocatesTheSameAtFourThousandRanksAsAtEight() {
        long small = bytesPerPick(8);
        long large = bytesPerPick(4096);
        // The old per-request scan allocated about 83 bytes per candidate rank (340 KB per pick at 4,096).
        assertThat(large).as("bytes per pick at 4,096 ranks vs %s at 8", small).isLessThan(small + 256);
        // The selection (32 bytes) and its dispatch record (32 bytes); the ledger's slots are reused in place
        // (a rank's ring is allocated by its first dispatch and subtracted by bytesPerPick).
        assertThat(small).as("bytes per pick at 8 ranks").isLessThanOrEqualTo(64);
        assertThat(large).as("bytes per pick at 4,096 ranks").isLessThanOrEqualTo(64);
    }

    /**
     * Four threads pick on one picker while the clock moves (so the pinned ranks' ledgers open and recycle
     * buckets under concurrent writers); with no sample answering anything, every dispatch's prompt tokens
     * must be in the ledgers exactly once, and ending every request leaves no open one behind.
     */
    @Test
    void concurrentPicksRecordEveryDispatchExactlyOnce() throws Exception {
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            workers.add(worker(NS, 100 + i, DECODE, MODEL, 0, 2));
            workers.add(worker(NS, 200 + i, PREFILL, MODEL, 0, 2));
        }
        DynamoSnapshot s = snapshot(workers.toArray(DynamoWorker[]::new));
        PickRequest request = new PickRequest(MODEL, Set.of(NS), EST);
        int threads = 4;
        int picks = 3_000;
        List<Selection.Dispatch> dispatches = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(threads);
        List<Thread> running = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < picks; i++) {
                        if (i % 25 == 0) {
                            load.advance(Duration.ofMillis(1));
                        }
                        Selection sel = picker.pick(s, request);
                        assertThat(sel).isNotNull();
                        dispatches.add(sel.dispatch());
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(e);
                }
            });
            running.add(th);
            th.start();
        }
        for (Thread th : running) {
            th.join();
        }
        assertThat(failures).isEmpty();
        long now = load.getAsLong();
        long decodeTokens = 0;
        long prefillTokens = 0;
        int open = 0;
        for (DynamoWorker w : workers) {
            for (int r = 0; r < 2; r++) {
                RankLedger ledger = picker.rankLedger(new dev.continuum.router.load.SampleKey(w.id(), r));
                long tokens = ledger.pendingTokens(DispatchLedger.NO_SAMPLE, now);
                if (w.role() == DECODE) {
                    decodeTokens += tokens;
                } else {
                    prefillTokens += tokens;
                }
                open += ledger.openRequests(DispatchLedger.NO_SAMPLE, now);
            }
        }
        long total = (long) threads * picks;
        assertThat(decodeTokens).isEqualTo(total * EST);
        assertThat(prefillTokens).isEqualTo(total * EST);
        // Only the prefill side of a pair is stall-eligible, and only a bucket's first 20 ms counts toward it.
        assertThat(open).isPositive().isLessThanOrEqualTo((int) total);
        // Every dispatch is an active sequence too: its tokens on the prefill rank, its blocks on both.
        ActiveSequences.Totals active = picker.sequences().totals();
        assertThat(active.prefillTokens()).isEqualTo(total * EST);
        assertThat(active.blocks()).isEqualTo(2 * total * ((EST + 15) / 16));
        dispatches.forEach(Selection.Dispatch::ended);
        int left = 0;
        for (DynamoWorker w : workers) {
            for (int r = 0; r < 2; r++) {
                left += picker.rankLedger(new dev.continuum.router.load.SampleKey(w.id(), r))
                        .openRequests(DispatchLedger.NO_SAMPLE, now);
            }
        }
        assertThat(left).isZero();
        assertThat(picker.sequences().totals()).isEqualTo(new ActiveSequences.Totals(0, 0, 0));
    }

    /** Bytes this thread allocates per pick over {@code ranks} fresh ranks (half decode, half prefill). */
    private long bytesPerPick(int ranks) {
        ScriptedLoad fleetLoad = new ScriptedLoad();
        LoadBasedPicker p = new LoadBasedPicker(fleetLoad, fleetLoad, new SelectionMetrics(new SimpleMeterRegistry()));
        List<DynamoWorker> workers = new ArrayList<>();
        int dp = ranks == 8 ? 4 : 8;
        for (int i = 0; i < ranks / dp / 2; i++) {
            workers.add(worker(NS, 1000 + i, DECODE, MODEL, 0, dp));
            workers.add(worker(NS, 5000 + i, PREFILL, MODEL, 0, dp));
        }
        for (DynamoWorker w : workers) {
            for (int r = 0; r < dp; r++) {
                fleetLoad.sample(w.id(), r, (w.instanceId() * 37 + r) % 500, (w.instanceId() * 7919 + r) % 4000);
            }
        }
        DynamoSnapshot s = snapshot(workers.toArray(DynamoWorker[]::new));
        PickRequest request = new PickRequest(MODEL, Set.of(NS), EST);
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 2_000; i++) {
            p.pick(s, request).dispatch().ended();
        }
        int n = 1_000;
        int ringsBefore = p.rings();
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < n; i++) {
            p.pick(s, request).dispatch().ended();
        }
        long bytes = threads.getThreadAllocatedBytes(id) - before;
        // A rank's first dispatch allocates its ring once; what a pick allocates is the rest.
        return (bytes - (long) (p.rings() - ringsBefore) * RankLedger.RING_BYTES) / n;
    }

    @Test
    void workersWithDataParallelSizeContributeOneCandidatePerDpRank() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED, MODEL, 4, 2));
        load.sample(id(1), 4, 50L, null);
        load.sample(id(1), 5, 10L, null);
        Selection sel = pick(s);
        assertThat(sel.decode().dpRank()).isEqualTo(5);
        assertThat(sel.decode().rankDeclared()).isTrue();
        assertThat(sel.prefill()).isNull();
    }

    @Test
    void rankIsDeclaredOnlyWhenTheCardHasDataParallelSize() {
        Selection sel = pick(snapshot(worker(NS, 1, AGGREGATED)));
        assertThat(sel.decode().dpRank()).isZero();
        assertThat(sel.decode().rankDeclared()).isFalse();
        Selection one = pick(snapshot(worker(NS, 1, AGGREGATED, MODEL, null, 1)));
        assertThat(one.decode().rankDeclared()).isTrue();
    }

    @Test
    void aCandidateWithoutTheCapacityItsPhaseNeedsHasNoDefinedCost() {
        DynamoSnapshot s = snapshot(ShimFleets.noCapacity(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 900L, null);
        assertThat(decodeIds(s, 3)).containsOnly(2L);
    }

    @Test
    void equalCostsRotateOnThePerPhaseCursor() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, DECODE),
                worker(NS, 9, PREFILL), worker(NS, 8, PREFILL));
        for (long w : new long[] {1, 2, 3}) {
            load.sample(id(w), 0, 5L, null);
        }
        load.sample(id(8), 0, null, 7L);
        load.sample(id(9), 0, null, 7L);
        // Every pick records unanswered blocks on its winner; a fresh sample answers them again.
        List<Long> decodes = new ArrayList<>();
        List<Long> prefills = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Selection sel = pick(s);
            // Ended, so that its active sequence stops counting too (a sample answers only the ledger).
            sel.dispatch().ended();
            decodes.add(sel.decode().worker().instanceId());
            prefills.add(sel.prefill().worker().instanceId());
            load.advance(Duration.ofMillis(1));
            for (long w : new long[] {1, 2, 3}) {
                load.sample(id(w), 0, 5L, null);
            }
            load.sample(id(8), 0, null, 7L);
            load.sample(id(9), 0, null, 7L);
        }
        assertThat(decodes).containsExactly(1L, 2L, 3L, 1L, 2L, 3L);
        assertThat(prefills).containsExactly(8L, 9L, 8L, 9L, 8L, 9L);
        assertThat(selections("decode", "load")).isEqualTo(6);
        assertThat(selections("prefill", "load")).isEqualTo(6);
    }

    @Test
    void aSessionsBoundRankWinsWhileItIsACandidateElseThePickIsAsUsual() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 100L, null);
        load.sample(id(2), 0, 0L, null);
        dev.continuum.router.load.SampleKey bound = new dev.continuum.router.load.SampleKey(id(1), 0);
        // Worker 1 is the dearer one: the binding still takes it.
        Selection sel = picker.pick(s, new PickRequest(MODEL, Set.of(NS), EST, null, null, bound));
        assertThat(sel.decode().worker()).isEqualTo(id(1));
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.SESSION);
        assertThat(selections("decode", "session")).isEqualTo(1);
        sel.dispatch().ended();
        // A binding to a rank that is no candidate (its worker left) is ignored: the cheaper worker wins.
        dev.continuum.router.load.SampleKey gone = new dev.continuum.router.load.SampleKey(id(7), 0);
        Selection other = picker.pick(s, new PickRequest(MODEL, Set.of(NS), EST, null, null, gone));
        assertThat(other.decode().worker()).isEqualTo(id(2));
        assertThat(other.decodeReason()).isEqualTo(SelectionReason.LOAD);
    }

    // --- Staleness and the best-effort contract ------------------------------------------------------------

    @Test
    void quietNeverPublishedCountsAsIdleAndCompetesOnCost() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 100L, null);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
    }

    @Test
    void quietLastSampleReportedNoBacklogCountsAsIdleAfterItAges() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(2), 0, 0L, 0L);
        load.advance(Duration.ofSeconds(10));
        load.sample(id(1), 0, 100L, null);
        assertThat(pick(s).decode().worker()).isEqualTo(id(2));
    }

    @Test
    void silentUnderLoadHasNoCostAndIsNotChosenWhileAnotherWorkerHasOne() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(2), 0, 1L, null);
        load.advance(Duration.ofSeconds(10));
        load.sample(id(1), 0, 900L, null);
        assertThat(decodeIds(s, 4)).containsOnly(1L);
    }

    @Test
    void aFreshSampleWithoutThePhasesFieldHasNoDefinedCost() {
        // dynamo.vllm prefill: active_prefill_tokens is nil; worker 3 publishes it.
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL));
        load.sample(id(2), 0, new ActiveLoad(2, 0, null, null, null, 0L));
        load.sample(id(3), 0, null, 900L);
        for (int i = 0; i < 3; i++) {
            assertThat(pick(s).prefill().worker()).isEqualTo(id(3));
        }
    }

    @Test
    void noFreshSampleOnAnyWorkerRotatesAcrossAllWorkersAsRoundRobinStale() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, DECODE));
        load.sample(id(1), 0, 900L, null); // silent under load once stale: still in the rotation
        load.advance(Duration.ofSeconds(4));
        Selection first = pick(s);
        assertThat(first.decodeReason()).isEqualTo(SelectionReason.ROUND_ROBIN_STALE);
        assertThat(first.prefillReason()).isEqualTo(SelectionReason.NO_PREFILL_POOL);
        assertThat(decodeIds(s, 5)).containsExactly(2L, 3L, 1L, 2L, 3L);
        assertThat(selections("decode", "round_robin_stale")).isEqualTo(6);
    }

    @Test
    void aVllmPrefillPoolWithoutPrefillTokensRotatesPrefillAsRoundRobinStale() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, new ActiveLoad(1, 0, null, null, null, 5L));
        load.sample(id(2), 0, new ActiveLoad(2, 0, null, null, null, 0L));
        load.sample(id(3), 0, new ActiveLoad(3, 0, null, null, null, 0L));
        List<Long> prefills = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Selection sel = pick(s);
            assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
            assertThat(sel.prefillReason()).isEqualTo(SelectionReason.ROUND_ROBIN_STALE);
            prefills.add(sel.prefill().worker().instanceId());
        }
        assertThat(prefills).containsExactly(2L, 3L, 2L, 3L);
    }

    @Test
    void aSourceWithoutLoadSignalsRotatesAsRoundRobinNoSignal() {
        DynamoSnapshot s = snapshot(DiscoverySourceKind.KUBERNETES_PODS, worker(NS, 1, DECODE),
                worker(NS, 2, DECODE), worker(NS, 3, PREFILL));
        Selection sel = pick(s);
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.ROUND_ROBIN_NO_SIGNAL);
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.ROUND_ROBIN_NO_SIGNAL);
        assertThat(decodeIds(s, 3)).containsExactly(2L, 1L, 2L);
    }

    @Test
    void maxStalenessIsReadOnEveryPick() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 900L, null);
        load.advance(Duration.ofSeconds(4));
        assertThat(pick(s).decodeReason()).isEqualTo(SelectionReason.ROUND_ROBIN_STALE);
        load.maxStaleness = Duration.ofSeconds(5);
        Selection sel = pick(s);
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
    }

    // --- Unanswered dispatches -----------------------------------------------------------------------------

    @Test
    void aBurstBetweenTwoSamplesFillsAQuietWorkerUpToItsPeersLoad() {
        // Worker 1 publishes 20 blocks; worker 2 never publishes. Each request is 4 blocks.
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 20L, null);
        List<Long> ids = decodeIds(s, 8);
        // Worker 2 takes requests until its unanswered 4-block dispatches reach 20, then they alternate.
        assertThat(ids.subList(0, 5)).containsOnly(2L);
        assertThat(ids.subList(5, 8)).contains(1L);
    }

    @Test
    void aSampleFromTheWorkerClearsItsUnansweredDispatches() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 8L, null);
        load.sample(id(2), 0, 8L, null);
        assertThat(decodeIds(s, 2)).containsExactly(1L, 2L);
        // Worker 1 answers and reports nothing extra: its unanswered blocks are gone, worker 2's stay.
        load.advance(Duration.ofMillis(1));
        load.sample(id(1), 0, 8L, null);
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    @Test
    void unansweredDispatchesCountForAtMostThirtySeconds() {
        load.maxStaleness = Duration.ofMinutes(5);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 8L, null);
        load.sample(id(2), 0, 10L, null);
        assertThat(decodeIds(s, 1)).containsExactly(1L); // 1 now carries 8 + 4 > 10
        assertThat(decodeIds(s, 1)).containsExactly(2L);
        load.advance(Duration.ofSeconds(31));
        // Both entries aged out; the stall rule no longer applies either.
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    // --- Stalled worker ------------------------------------------------------------------------------------

    @Test
    void aWorkerThatLeavesARequestOfTwoOrMoreBlocksUnansweredForFiveSecondsIsNotChosen() {
        load.maxStaleness = Duration.ofMinutes(1);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 100L, null);
        assertThat(decodeIds(s, 1)).containsExactly(1L);
        load.advance(Duration.ofSeconds(5));
        assertThat(decodeIds(s, 2)).containsOnly(2L);
        // "until a sample arrives"
        load.sample(id(1), 0, 0L, null);
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    @Test
    void aStalledWorkerIsChosenWhenNoOtherWorkerHasACost() {
        load.maxStaleness = Duration.ofMinutes(1);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 1L, null);
        load.advance(Duration.ofSeconds(2));
        load.sample(id(2), 0, 1L, null);
        assertThat(decodeIds(s, 1)).containsExactly(1L);
        load.advance(Duration.ofSeconds(5));
        load.sample(id(2), 0, new ActiveLoad(2, 0, 900L, null, null, null));
        // 1 is stalled but has a cost; 2 has a cost too, so 2 wins despite its load.
        assertThat(decodeIds(s, 1)).containsExactly(2L);
        load.drop(id(2), 0);
        load.sample(id(2), 0, new ActiveLoad(2, 0, null, 5L, null, null)); // no decode field: no cost
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    @Test
    void theDecodeWorkerOfAPrefillAndDecodePairIsNotBlamedForAStall() {
        load.maxStaleness = Duration.ofMinutes(1);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 100L, null);
        load.sample(id(3), 0, null, 0L);
        load.sample(id(4), 0, null, 500L);
        Selection first = pick(s);
        assertThat(first.decode().worker()).isEqualTo(id(1));
        assertThat(first.prefill().worker()).isEqualTo(id(3));
        load.advance(Duration.ofSeconds(6));
        Selection second = pick(s);
        assertThat(second.decode().worker()).isEqualTo(id(1));
        // The prefill worker of the pair is blamed: it received the request directly.
        assertThat(second.prefill().worker()).isEqualTo(id(4));
    }

    @Test
    void aRequestThatHasAlreadyEndedIsNotBlamedForAStall() {
        load.maxStaleness = Duration.ofMinutes(1);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 100L, null);
        Selection refused = pick(s);
        assertThat(refused.decode().worker()).isEqualTo(id(1));
        refused.dispatch().ended();
        load.advance(Duration.ofSeconds(6));
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    @Test
    void whenNoWorkerHasAFreshSampleAStallIsIgnored() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        assertThat(decodeIds(s, 2)).containsExactly(1L, 2L);
        load.advance(Duration.ofSeconds(6));
        assertThat(decodeIds(s, 2)).containsExactly(1L, 2L);
    }

    @Test
    void aOneBlockRequestDoesNotMarkAStall() {
        load.maxStaleness = Duration.ofMinutes(1);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 100L, null);
        Selection small = picker.pick(s, new PickRequest(MODEL, Set.of(NS), 16));
        assertThat(small.decode().worker()).isEqualTo(id(1));
        load.advance(Duration.ofSeconds(6));
        assertThat(decodeIds(s, 1)).containsExactly(1L);
    }

    // --- Mixed namespaces and several namespaces -----------------------------------------------------------

    @Test
    void aggregatedWorkersBesideAPrefillDecodePoolAreNotDecodeCandidates() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, DECODE), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 900L, null);
        for (int i = 0; i < 3; i++) {
            Selection sel = pick(s);
            assertThat(sel.decode().worker()).isEqualTo(id(2));
            assertThat(sel.prefill().worker()).isEqualTo(id(3));
        }
    }

    @Test
    void anAggregatedDecodeWinnerPinsNoPrefillEvenBesidePrefillWorkers() {
        // Prefill workers beside aggregated workers alone: the namespace is scored as aggregated.
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 3, PREFILL));
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(1));
        assertThat(sel.decode().role()).isEqualTo(AGGREGATED);
        assertThat(sel.prefill()).isNull();
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.NO_PREFILL_POOL);
        assertThat(selections("prefill", "no_prefill_pool")).isEqualTo(1);
    }

    @Test
    void decodeAndAggregatedWorkersAreBothDecodeCandidatesWithoutAPrefillPool() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 900L, null);
        load.sample(id(2), 0, 0L, null);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.prefill()).isNull();
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.NO_PREFILL_POOL);
    }

    @Test
    void decodeIsComparedAcrossNamespacesAndPrefillPickedWithinTheWinner() {
        WorkerId canaryDecode = new WorkerId("canary", 7);
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL),
                worker("canary", 7, DECODE), worker("canary", 8, PREFILL));
        load.sample(id(1), 0, 500L, null);
        load.sample(id(2), 0, null, 0L);
        load.sample(canaryDecode, 0, 10L, null);
        load.sample(new WorkerId("canary", 8), 0, null, 900L);
        Selection sel = pick(s, Set.of(NS, "canary"));
        assertThat(sel.decode().worker()).isEqualTo(canaryDecode);
        assertThat(sel.prefill().worker()).isEqualTo(new WorkerId("canary", 8));
        assertThat(sel.namespace()).isEqualTo("canary");
    }

    @Test
    void onlyNamespacesWithAUsableShimReplicaOfferCandidates() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker("canary", 7, DECODE));
        load.sample(id(1), 0, 500L, null);
        Selection sel = pick(s, Set.of(NS));
        assertThat(sel.decode().worker()).isEqualTo(id(1));
        assertThat(picker.pick(s, new PickRequest(MODEL, Set.of("other"), EST))).isNull();
    }

    @Test
    void noWorkerServingTheModelMeansNoSelection() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE, "other-model", null, null), worker(NS, 2, UNKNOWN),
                worker(NS, 3, DECODE, null, null, null), worker(NS, 4, PREFILL));
        assertThat(picker.pick(s, new PickRequest(MODEL, Set.of(NS), EST))).isNull();
        assertThat(registry.find(SelectionMetrics.SELECTIONS).counters())
                .allSatisfy(c -> assertThat(c.count()).isZero())
                .hasSize(7);
    }

    @Test
    void onlySeriesTheLoadPickerCanCountAreExportedUpFront() {
        List<String> series = registry.find(SelectionMetrics.SELECTIONS).counters().stream()
                .map(c -> c.getId().getTag("role") + "/" + c.getId().getTag("reason")).sorted().toList();
        assertThat(series).containsExactly("decode/load", "decode/round_robin_no_signal",
                "decode/round_robin_stale", "prefill/load", "prefill/no_prefill_pool",
                "prefill/round_robin_no_signal", "prefill/round_robin_stale");

        // A reason recorded later (the KV-aware picker's) gets its series then, once.
        SelectionMetrics metrics = new SelectionMetrics(registry);
        metrics.record(SelectionReason.KV_AWARE, SelectionReason.CONDITIONAL_BYPASS);
        metrics.record(SelectionReason.KV_AWARE, SelectionReason.CONDITIONAL_BYPASS);
        assertThat(selections("decode", "kv_aware")).isEqualTo(2);
        assertThat(selections("prefill", "conditional_bypass")).isEqualTo(2);
        assertThat(registry.find(SelectionMetrics.SELECTIONS).counters()).hasSize(9);
    }

    @Test
    void theLedgerForgetsRanksWhoseDispatchesAgedOut() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        decodeIds(s, 2);
        assertThat(picker.ledgerKeys()).isEqualTo(2);
        load.advance(Duration.ofSeconds(31));
        decodeIds(snapshot(worker(NS, 3, DECODE)), 1);
        // Aged dispatches stop counting at once; their memory goes with the upkeep's sweep, not on a request.
        assertThat(picker.ledgers()).isEqualTo(3);
        picker.sweepLedger();
        assertThat(picker.ledgerKeys()).isEqualTo(1);
        assertThat(picker.ledgers()).isEqualTo(1);
    }

    // --- Load-store slots: the index reads each rank's sample without a lookup -----------------------------

    @Test
    void samplesOfARankTheIndexDidNotKnowAreSeenOnceTheIndexIsRebuilt() {
        assertThat(pick(snapshot(worker(NS, 1, DECODE))).decode().worker().instanceId()).isEqualTo(1);
        load.sample(id(1), 0, 900L, null);
        load.sample(id(2), 0, 10L, null); // worker 2 is not in the index yet

        DynamoSnapshot both = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        assertThat(decodeIds(both, 3)).containsOnly(2L);
        load.sample(id(2), 0, 1_000L, null); // and its later samples reach the new index's slot
        assertThat(decodeIds(both, 3)).containsOnly(1L);
    }

    @Test
    void aRankWhoseSlotTheStoreDetachedIsReadByKeyUntilTheUpkeepTakesItsFreshSlot() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, DECODE));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 900L, null);
        assertThat(decodeIds(s, 2)).containsOnly(1L);

        // The store detaches worker 1's slot (its key left the live set and came back before this index
        // changed): the detached slot shows nothing, and the picker reads the store by key instead.
        load.retire(id(1), 0);
        CandidateRanks ranks = picker.index(s).model(MODEL).groups()[0].decode();
        assertThat(ranks.slots[0].detached()).isTrue();
        assertThat(decodeIds(s, 2)).containsOnly(1L);
        load.sample(id(1), 0, 2_000L, null);
        assertThat(decodeIds(s, 2)).containsOnly(2L);

        picker.sweepLedger(); // the upkeep's run: a fresh slot for worker 1, with its held sample
        CandidateRanks rebuilt = picker.index(s).model(MODEL).groups()[0].decode();
        assertThat(rebuilt).isNotSameAs(ranks);
        assertThat(rebuilt.slots[0].detached()).isFalse();
        assertThat(rebuilt.slots[0].sample()).isNotNull();
        load.sample(id(1), 0, 0L, null);
        assertThat(decodeIds(s, 2)).containsOnly(1L);

        picker.sweepLedger(); // nothing detached since: the index stays
        assertThat(picker.index(s).model(MODEL).groups()[0].decode()).isSameAs(rebuilt);
    }
}
