package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.snapshot;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.WorkerId;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The picker's seam to the router's cache prediction: which rank is reported after a KV pick (the one that
 * prefills), with which block size's hashes, and approximate namespaces scored with the formula although no
 * kv-events publisher exists (docs/kv-routing.md, "Predicted cache and approximate mode").
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KvPickListenerTest {
    private static final String NS = "dynamo";

    private final ScriptedLoad load = new ScriptedLoad();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LoadBasedPicker loadPicker = new LoadBasedPicker(load, load, new SelectionMetrics(registry));
    private final FixedOverlap index = new FixedOverlap();
    private final List<String> picks = new ArrayList<>();
    private boolean approximate;

    private final KvPickListener listener = new KvPickListener() {
        @Override
        public boolean approximate(String namespace, boolean kvEventsPublished) {
            return approximate;
        }

        @Override
        public void picked(WorkerPin rank, BlockHashes hashes) {
            picks.add(rank.worker().instanceId() + "/" + rank.dpRank() + " bs" + hashes.blockSize() + " x"
                    + hashes.blocks());
        }
    };
    private final KvAwarePicker picker = new KvAwarePicker(loadPicker, index, () -> KvPickerSettings.DEFAULTS,
            new KvSelectionMetrics(registry), () -> 0.5, listener);

    /** 8 blocks of 16 tokens, and the same prompt hashed at 32 (4 blocks), as a model with two block sizes. */
    private static final PromptBlocks PROMPT = new PromptBlocks(128, List.of(
            new BlockHashes(32, new long[] {1, 2, 3, 4}),
            new BlockHashes(ShimFleets.BLOCK, new long[] {11, 12, 13, 14, 15, 16, 17, 18})));

    private double kvResults(String result) {
        return registry.get(KvSelectionMetrics.NAME).tag("result", result).counter().count();
    }

    @Test
    void withoutKvEventsANamespaceIsScoredOnlyWhenItRunsApproximate() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        index.hold(2, 0, 8);

        Selection sel = picker.pick(s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        assertThat(sel).isNotNull();
        assertThat(kvResults("no_overlap")).as("precise: no publisher, load-based").isEqualTo(1);
        assertThat(picks).isEmpty();

        approximate = true;
        sel = picker.pick(s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        assertThat(sel).isNotNull();
        assertThat(sel.decode().worker()).isEqualTo(new WorkerId(NS, 2));
        assertThat(kvResults("overlap")).isEqualTo(1);
        assertThat(picks).containsExactly("2/0 bs16 x8");
    }

    @Test
    void aDisaggregatedPickReportsThePrefillRank() {
        approximate = true;
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 5, PREFILL), worker(NS, 6, PREFILL));
        index.hold(6, 0, 3);
        Selection sel = picker.pick(s, new PickRequest(MODEL, Set.of(NS), 64, PROMPT));
        assertThat(sel).isNotNull();
        assertThat(sel.prefill()).isNotNull();
        assertThat(sel.prefill().worker().instanceId()).isEqualTo(6);
        assertThat(picks).containsExactly("6/0 bs16 x8");
    }

    @Test
    void aLoadBasedFallbackReportsNothing() {
        approximate = true;
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED));
        assertThat(picker.pick(s, new PickRequest(MODEL, Set.of(NS), 64, null,
                KvSelectionResult.TOKENIZER_UNAVAILABLE))).isNotNull();
        assertThat(picks).isEmpty();
    }
}
