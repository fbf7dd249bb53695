package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.wire.ActiveLoad;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The KV-aware picker over a scripted load store and {@link FixedOverlap}, a test implementation of the index's
 * read side (the radix index itself is tested in router-kv).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KvAwarePickerTest {
    private static final String NS = "dynamo";
    private static final int BS = ShimFleets.BLOCK; // 16
    /** 8 blocks of 16 tokens. */
    private static final PromptBlocks PROMPT = prompt(128);

    private final ScriptedLoad load = new ScriptedLoad();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SelectionMetrics selections = new SelectionMetrics(registry);
    private final LoadBasedPicker loadPicker = new LoadBasedPicker(load, load, selections);
    private final FixedOverlap index = new FixedOverlap();
    private final AtomicReference<KvPickerSettings> settings = new AtomicReference<>(KvPickerSettings.DEFAULTS);
    private final SplittableRandom random = new SplittableRandom(1234);
    private final KvAwarePicker picker = new KvAwarePicker(loadPicker, index, settings::get,
            new KvSelectionMetrics(registry), random::nextDouble);

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

    /** A fleet whose namespace has a kv-events publisher (the index is fed). */
    private static DynamoSnapshot fed(DynamoWorker... workers) {
        DynamoPublisher events = new DynamoPublisher(new PublisherId(NS, 77), PublisherTopic.KV_EVENTS, "backend",
                null, "tcp://127.0.0.1:5557");
        return new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of(NS), 1, true,
                FleetView.of(List.of(workers), List.of(events)));
    }

    private Selection pick(DynamoSnapshot s) {
        return pick(s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
    }

    private Selection pick(DynamoSnapshot s, PickRequest request) {
        Selection sel = picker.pick(s, request);
        assertThat(sel).isNotNull();
        return sel;
    }

    private List<Long> prefillIds(DynamoSnapshot s, int times) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            Selection sel = pick(s);
            sel.dispatch().ended();
            out.add(sel.prefill().worker().instanceId());
        }
        return out;
    }

    private double kvResults(String result) {
        return registry.get(KvSelectionMetrics.NAME).tag("result", result).counter().count();
    }

    private double selections(String role, String reason) {
        var c = registry.find(SelectionMetrics.SELECTIONS).tag("role", role).tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    // --- The formula -----------------------------------------------------------------------------------

    @Test
    void theAggregatedRankHoldingThePrefixWinsOverAnEquallyLoadedOne() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        load.sample(id(1), 0, 20L, null);
        load.sample(id(2), 0, 20L, null);
        index.hold(2, 0, 6);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.prefill()).isNull();
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.KV_AWARE);
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.NO_PREFILL_POOL);
        assertThat(kvResults("overlap")).isEqualTo(1);
        assertThat(selections("decode", "kv_aware")).isEqualTo(1);
    }

    @Test
    void theWinnerIsTheLowestCostAsComputedByHand() {
        // isl 128, bs 16 (8 blocks). Aggregated: prefill tokens from the sample, decode blocks as the backlog.
        //   w1: prefill 0,   decode 40, overlap 0: (0+128)/16 = 8      + 40 + 8 = 56
        //   w2: prefill 320, decode 10, overlap 8: max(0, 28 - 8) = 20 + 10 + 0 = 30
        //   w3: prefill 0,   decode 30, overlap 4: 8 - 4 = 4           + 30 + 4 = 38
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED), worker(NS, 3, AGGREGATED));
        load.sample(id(1), 0, 40L, 0L);
        load.sample(id(2), 0, 10L, 320L);
        load.sample(id(3), 0, 30L, 0L);
        index.hold(2, 0, 8).hold(3, 0, 4);
        assertThat(pick(s).decode().worker()).isEqualTo(id(2));
        // prefill_load_scale 3: w1 = 24 + 48 = 72, w2 = 60 + 10 = 70, w3 = 12 + 34 = 46 (the dispatch above
        // added nothing unanswered to w2, which held the whole prompt, and its 8 active blocks stay below the
        // sample's 10: w2 is still 70)
        settings.set(new KvPickerSettings(1.0, 3.0, 0, false, null));
        assertThat(pick(s).decode().worker()).isEqualTo(id(3));
    }

    @Test
    void disaggregatedPairsPickDecodeByLoadAndPrefillByOverlap() {
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        load.sample(id(1), 0, 500L, null);
        load.sample(id(2), 0, 100L, null);
        load.sample(id(3), 0, null, 0L);
        load.sample(id(4), 0, null, 0L);
        index.hold(4, 0, 8).hold(1, 0, 8); // the decode worker's overlap does not matter without conditional
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
        assertThat(sel.prefill().worker()).isEqualTo(id(4));
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.KV_AWARE);
        assertThat(kvResults("overlap")).isEqualTo(1);
    }

    /** A prompt of a shared {@code prefixBlocks}-block prefix (hashes from 1000) and one block of its own. */
    private static PromptBlocks sharingPrefix(int prefixBlocks, long own) {
        long[] hashes = new long[prefixBlocks + 1];
        for (int i = 0; i < prefixBlocks; i++) {
            hashes[i] = 1000 + i;
        }
        hashes[prefixBlocks] = own;
        return new PromptBlocks((prefixBlocks + 1) * BS, List.of(new BlockHashes(BS, hashes)));
    }

    /**
     * A burst sharing a new prefix, sent before the first request's first token: the rank prefilling the prefix
     * (known through the predicted overlay, emulated here by a listener that marks the picked rank as holding it)
     * takes the rest, because the prefix's in-flight prefill there is work they would otherwise repeat elsewhere.
     * Without the discount every idle rank ties it and the burst is spread, each rank prefilling the prefix once.
     */
    @Test
    void aBurstSharingAPrefixBeingPrefilledStaysOnTheRankPrefillingIt() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED), worker(NS, 3, AGGREGATED),
                worker(NS, 4, AGGREGATED));
        for (long w = 1; w <= 4; w++) {
            load.sample(id(w), 0, 0L, null); // kv_used_blocks only, as dynamo.vllm 1.4.2 publishes
        }
        KvPickListener predicted = new KvPickListener() {
            @Override
            public boolean approximate(String namespace, boolean kvEventsPublished) {
                return false;
            }

            @Override
            public void picked(WorkerPin rank, BlockHashes hashes) {
                index.hold(rank.worker().instanceId(), (int) rank.dpRank(), 500);
            }
        };
        KvAwarePicker burstPicker = new KvAwarePicker(loadPicker, index, settings::get,
                new KvSelectionMetrics(new SimpleMeterRegistry()), random::nextDouble, predicted);
        Set<Long> ranks = new java.util.HashSet<>();
        List<Selection> open = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Selection sel = burstPicker.pick(s, new PickRequest(MODEL, Set.of(NS), 8016, sharingPrefix(500, 9000 + i)));
            assertThat(sel).isNotNull();
            open.add(sel);
            ranks.add(sel.decode().worker().instanceId());
        }
        assertThat(ranks).as("ranks that prefill the shared prefix").hasSize(1);
        long holder = ranks.iterator().next();

        // A prompt the index says the holder holds as deep, but with other hashes: it does not share the
        // in-flight prefill, so the holder's backlog counts in full and an idle rank wins.
        PromptBlocks other = new PromptBlocks(501 * BS, List.of(new BlockHashes(BS, new long[501])));
        Selection unrelated = burstPicker.pick(s, new PickRequest(MODEL, Set.of(NS), 501 * BS, other));
        assertThat(unrelated).isNotNull();
        assertThat(unrelated.decode().worker().instanceId()).isNotEqualTo(holder);
        unrelated.dispatch().ended(SequenceEnd.COMPLETED);
        open.forEach(sel -> sel.dispatch().ended(SequenceEnd.COMPLETED));
    }

    @Test
    void oneIndexLookupPerBlockSizePerPick() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED), worker(NS, 3, AGGREGATED));
        pick(s);
        assertThat(index.lookups).isEqualTo(1);
    }

    // --- Freshness and quiet ---------------------------------------------------------------------------

    @Test
    void aRankSilentUnderLoadSitsOutWhileAQuietRankCompetesWithZeroBacklog() {
        load.sample(id(3), 0, null, 900L); // will go stale while reporting a backlog: silent under load
        load.advance(Duration.ofSeconds(30));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, null, 64L); // fresh, a small backlog, no overlap: (64 + 128) / 16 + 8 = 20
        index.hold(3, 0, 8).hold(4, 0, 8);
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL));
        assertThat(prefillIds(s, 3)).containsOnly(2L);
        // A rank that never published (quiet) competes with zero backlog: max(0, 8 - 8) + 0 = 0 wins.
        DynamoSnapshot withQuiet = fed(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        assertThat(prefillIds(withQuiet, 3)).containsOnly(4L);
    }

    @Test
    void withoutAnyFreshBacklogRanksCompeteOnOverlapAndRotateOnlyOnTies() {
        // dynamo.vllm prefill workers publish no active_prefill_tokens.
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        load.sample(id(1), 0, 0L, null);
        for (long w : new long[] {2, 3, 4}) {
            load.sample(id(w), 0, new ActiveLoad(w, 0, null, null, null, 50L));
        }
        index.hold(3, 0, 2);
        Selection sel = pick(s);
        assertThat(sel.prefill().worker()).isEqualTo(id(3));
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.KV_AWARE);
        index.hold(3, 0, 0);
        assertThat(prefillIds(s, 6)).containsExactly(2L, 3L, 4L, 2L, 3L, 4L);
        assertThat(selections("prefill", "round_robin_stale")).isEqualTo(6);
    }

    // --- Ties and temperature --------------------------------------------------------------------------

    @Test
    void equalCostsRotateOnADeterministicPerPhaseCursor() {
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 2, PREFILL), worker(NS, 3, PREFILL),
                worker(NS, 4, PREFILL));
        List<Long> chosen = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // Fresh samples before each pick answer the previous dispatches, so 2 and 4 tie every time.
            answered(1, 0L, null);
            answered(2, null, 0L);
            answered(3, null, 500L);
            answered(4, null, 0L);
            Selection sel = pick(s);
            sel.dispatch().ended();
            // A hashed sequence's blocks leave its rank when the drainer releases them (the upkeep, every 10 ms).
            loadPicker.drainSequences();
            chosen.add(sel.prefill().worker().instanceId());
        }
        assertThat(chosen).containsExactly(2L, 4L, 2L, 4L, 2L, 4L);
    }

    /** A sample received after every dispatch so far (the ledger forgets what it answers). */
    private void answered(long worker, Long decodeBlocks, Long prefillTokens) {
        load.advance(Duration.ofMillis(1));
        load.sample(id(worker), 0, decodeBlocks, prefillTokens);
    }

    @Test
    void aboveZeroTemperatureSamplesBySoftmaxOfTheCosts() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        // costs: w1 = 8 + 0 + 8 = 16, w2 = 8 + 8 + 8 = 24; range 8, T = 1: p(w2) = e^-1 / (1 + e^-1)
        settings.set(new KvPickerSettings(1.0, 1.0, 1.0, false, null));
        int n = 20_000;
        int second = 0;
        for (int i = 0; i < n; i++) {
            answered(1, 0L, 0L);
            answered(2, 8L, 0L);
            Selection sel = pick(s);
            sel.dispatch().ended();
            loadPicker.drainSequences();
            second += sel.decode().worker().equals(id(2)) ? 1 : 0;
        }
        double expected = Math.exp(-1) / (1 + Math.exp(-1));
        assertThat((double) second / n).isCloseTo(expected, within(0.015));
    }

    // --- Fallbacks -------------------------------------------------------------------------------------

    @Test
    void everyFallbackTakesTheLoadBasedDecisionAndIsCountedUnderItsResult() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 900L, null);
        index.hold(2, 0, 8); // would win on overlap, but no prompt was encoded
        for (KvSelectionResult why : List.of(KvSelectionResult.TOKENIZER_UNAVAILABLE,
                KvSelectionResult.PROMPT_TOO_LARGE, KvSelectionResult.RENDER_UNAVAILABLE,
                KvSelectionResult.ARTIFACT_UNPINNED)) {
            Selection sel = pick(s, new PickRequest(MODEL, Set.of(NS), 64, null, why));
            assertThat(sel.decode().worker()).isEqualTo(id(1));
            assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
            sel.dispatch().ended();
            assertThat(kvResults(why.label())).as(why.label()).isEqualTo(1);
        }
        // No reason given: the tokenizer was not available.
        pick(s, new PickRequest(MODEL, Set.of(NS), 64)).dispatch().ended();
        assertThat(kvResults("tokenizer_unavailable")).isEqualTo(2);
        assertThat(selections("decode", "kv_aware")).isZero();
    }

    @Test
    void aFleetWithoutKvEventsTakesTheLoadBasedDecision() {
        DynamoSnapshot s = ShimFleets.snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 900L, null);
        index.hold(2, 0, 8);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(1));
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.LOAD);
        assertThat(kvResults("no_overlap")).isEqualTo(1);
    }

    @Test
    void anUnknownModelOrNamespaceIsNoSelection() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED));
        assertThat(picker.pick(s, new PickRequest("other", Set.of(NS), 64, PROMPT))).isNull();
        assertThat(picker.pick(s, new PickRequest(MODEL, Set.of("elsewhere"), 64, PROMPT))).isNull();
    }

    // --- Namespace rules -------------------------------------------------------------------------------

    @Test
    void prefillWorkersBesideAggregatedWorkersAloneLeaveTheFleetScoredAsAggregated() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 10L, null);
        index.hold(2, 0, 8).hold(3, 0, 8);
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.decode().role()).isEqualTo(AGGREGATED);
        assertThat(sel.prefill()).isNull();
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.KV_AWARE);
    }

    @Test
    void inAPairedNamespaceAggregatedWorkersAreNeverTheDecodePin() {
        DynamoSnapshot s = fed(worker(NS, 1, AGGREGATED), worker(NS, 2, DECODE), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 0L, null);
        load.sample(id(2), 0, 900L, null);
        index.hold(1, 0, 8);
        for (int i = 0; i < 3; i++) {
            Selection sel = pick(s);
            assertThat(sel.decode().worker()).isEqualTo(id(2));
            assertThat(sel.prefill().worker()).isEqualTo(id(3));
        }
    }

    // --- Conditional disaggregation --------------------------------------------------------------------

    @Test
    void conditionalDisaggregationPrefersTheCacheHotDecodeWorkerAndBypassesAMostlyCachedPrompt() {
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 2, DECODE), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(2), 0, 14L, null);
        load.sample(id(3), 0, null, 0L);
        index.hold(2, 0, 8);
        settings.set(new KvPickerSettings(1.0, 1.0, 0, true, null));
        // decode scores: w1 = max(0, 10 + 8 - 0) = 18, w2 = max(0, 14 + 0 - 8) = 6
        Selection sel = pick(s);
        assertThat(sel.decode().worker()).isEqualTo(id(2));
        assertThat(sel.decodeReason()).isEqualTo(SelectionReason.KV_AWARE);
        assertThat(sel.prefill()).isNull();
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.CONDITIONAL_BYPASS);
        assertThat(kvResults("bypass")).isEqualTo(1);
        assertThat(selections("prefill", "conditional_bypass")).isEqualTo(1);
    }

    @Test
    void aPromptThatIsNotMostlyCachedStillGoesToAPrefillWorker() {
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 3, PREFILL));
        load.sample(id(1), 0, 10L, null);
        load.sample(id(3), 0, null, 0L);
        index.hold(1, 0, 2); // 96 of 128 tokens uncached: share 0.75 >= 0.7
        settings.set(new KvPickerSettings(1.0, 1.0, 0, true, null));
        Selection sel = pick(s);
        assertThat(sel.prefill().worker()).isEqualTo(id(3));
        assertThat(sel.prefillReason()).isEqualTo(SelectionReason.KV_AWARE);
    }

    @Test
    void decodeBusyThresholdVetoesABypassOnABusyOrUnmeasuredWorker() {
        // total_kv_blocks 1000: projected = backlog + 0 new blocks (all 8 cached)
        DynamoSnapshot s = fed(worker(NS, 1, DECODE), worker(NS, 3, PREFILL));
        load.sample(id(3), 0, null, 0L);
        index.hold(1, 0, 8);
        settings.set(new KvPickerSettings(1.0, 1.0, 0, true, 0.5));
        load.sample(id(1), 0, 600L, null); // 600 > 0.5 * 1000
        Selection busy = pick(s);
        busy.dispatch().ended();
        assertThat(busy.prefill()).isNotNull();
        load.sample(id(1), 0, 400L, null);
        Selection calm = pick(s);
        calm.dispatch().ended();
        assertThat(calm.prefill()).isNull();
        assertThat(calm.prefillReason()).isEqualTo(SelectionReason.CONDITIONAL_BYPASS);
        load.drop(id(1), 0); // no sample: vetoed
        assertThat(pick(s).prefill()).isNotNull();
    }

    // --- Cost per pick ---------------------------------------------------------------------------------

    @Test
    void aKvPickAllocatesNoMoreThanALoadBasedPick() {
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            workers.add(worker(NS, 100 + i, AGGREGATED, MODEL, 0, 4));
        }
        DynamoSnapshot s = fed(workers.toArray(DynamoWorker[]::new));
        for (DynamoWorker w : workers) {
            for (int r = 0; r < 4; r++) {
                load.sample(w.id(), r, (w.instanceId() * 37 + r) % 500, (w.instanceId() * 7919 + r) % 4000);
                index.hold(w.instanceId(), r, (int) ((w.instanceId() + r) % 9));
            }
        }
        PickRequest kvRequest = new PickRequest(MODEL, Set.of(NS), 128, PROMPT);
        PickRequest plain = new PickRequest(MODEL, Set.of(NS), 128);
        long kv = bytesPerPick(() -> picker.pick(s, kvRequest));
        long base = bytesPerPick(() -> loadPicker.pick(s, plain));
        // Printed for docs/benchmarks.md (allocation figures are trustworthy on a loaded machine).
        System.out.printf("bytes per pick over 128 ranks: kv-aware %d, load-based %d%n", kv, base);
        assertThat(kv).as("KV pick %s bytes vs load-based %s", kv, base).isLessThanOrEqualTo(base + 32);
    }

    private static long bytesPerPick(java.util.function.Supplier<Selection> pick) {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 5_000; i++) {
            pick.get().dispatch().ended();
        }
        int n = 2_000;
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < n; i++) {
            pick.get().dispatch().ended();
        }
        return (threads.getThreadAllocatedBytes(id) - before) / n;
    }

    /** A thread's scratch answers only its current prompt's hashes and, after the pick, holds no prompt at all. */
    @Test
    void theScratchForgetsAPromptsResolvedHashes() {
        KvAwarePicker.KvScratch kv = new KvAwarePicker.KvScratch();
        PromptBlocks first = prompt(64);
        PromptBlocks second = prompt(32);
        kv.prompt(first);
        assertThat(kv.hashes(BS)).isSameAs(first.blockHashes().get(0));
        kv.prompt(second);
        assertThat(kv.hashes(BS)).isSameAs(second.blockHashes().get(0));
        kv.release();
        assertThat(kv.prompt).isNull();
        assertThat(kv.resolvedCount).isZero();
        assertThat(kv.resolved).containsOnlyNulls();
        assertThat(kv.hashes(BS)).as("no prompt, no hashes").isNull();
    }
}
