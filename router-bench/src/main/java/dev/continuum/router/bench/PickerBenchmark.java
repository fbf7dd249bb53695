package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.RecordingPicker;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SelectionReason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Picker decision time: {@code DynamoWorkerPicker.loadBased} (LoadBasedPicker) for 8, 256, 1,024 and 4,096
 * candidate ranks, half decode and half prefill in one namespace (8 dp ranks per worker; 4 at 8 ranks),
 * the same fleet as the hand-written PickerBenchmark. Each pick scores every decode rank, then every
 * prefill rank, and records its dispatches in the ledger; the request then ends.
 *
 * <p>Every rank holds a sample with both phase fields, put into the real load store through a kv_metrics
 * subscription (ZMTP bytes, decoders, store) in setup. The picker's clock stands 1 ms before the samples'
 * receipt time: every sample is fresh and answers every dispatch, the steady state under publishers that
 * report more often than picks land on one rank, so the ledger holds at most one entry per picked rank.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PickerBenchmark {
    private static final long SAMPLED_AT = TimeUnit.SECONDS.toNanos(10);

    @Param({"8", "256", "1024", "4096"})
    public int candidateRanks;

    /**
     * {@code on}: every pick is recorded as the dispatcher records it (dynamo.decisions defaults: 2048 records in
     * 8 MiB, 8 candidates a phase besides the winner); {@code small_ring}: the same records in a 64-record ring, so
     * what stays live is small and the difference to {@code on} is the cost of keeping the full ring.
     */
    @Param({"off", "on", "small_ring"})
    public String decisions = "off";

    private long clock;
    private KvMetricsFeed feed;
    private DynamoSnapshot snapshot;
    private DynamoWorkerPicker picker;
    private PickRequest request;

    @Setup
    public void setup() throws Exception {
        List<DynamoWorker> workers = Fleets.disaggregated(candidateRanks);
        int dp = Fleets.dpSize(candidateRanks);
        if (workers.size() * dp != candidateRanks) {
            throw new IllegalStateException(workers.size() * dp + " ranks, expected " + candidateRanks);
        }
        Set<WorkerId> live = new HashSet<>();
        workers.forEach(w -> live.add(w.id()));
        clock = SAMPLED_AT;
        feed = new KvMetricsFeed(live, () -> clock);
        long v = 0;
        for (DynamoWorker w : workers) {
            for (int r = 0; r < dp; r++, v++) {
                feed.publish(w.instanceId(), r, (v * 37 + r) % 500, (v * 7919 + r) % 4000);
            }
        }
        if (feed.store().size() != candidateRanks) {
            throw new IllegalStateException("store holds " + feed.store().size() + " samples");
        }
        clock = SAMPLED_AT - TimeUnit.MILLISECONDS.toNanos(1);
        snapshot = Fleets.snapshot(workers);
        picker = DynamoWorkerPicker.loadBased(feed.store(), () -> clock, new SimpleMeterRegistry());
        if (!decisions.equals("off")) {
            DecisionSettings s = decisions.equals("on") ? DecisionSettings.DEFAULTS
                    : new DecisionSettings(true, 64, 64L * DecisionSettings.DEFAULTS.bytesPerRecord());
            picker = new RecordingPicker(picker, new DecisionLog(() -> s, new SimpleMeterRegistry()));
        }
        // About 1,500 tokens: the estimate of the ChatBodies conversation.
        request = new PickRequest(ChatBodies.MODEL, Set.of(Fleets.NS), 1_500);
        Selection s = picker.pick(snapshot, request);
        if (s == null || s.prefill() == null || s.decodeReason() != SelectionReason.LOAD
                || s.prefillReason() != SelectionReason.LOAD) {
            throw new IllegalStateException("expected a load-based prefill/decode pair: " + s);
        }
        s.dispatch().ended();
    }

    @TearDown
    public void tearDown() throws Exception {
        feed.close();
    }

    @Benchmark
    public void pick(Blackhole bh) {
        Selection s = Objects.requireNonNull(picker.pick(snapshot, request)); // setup saw the fleet's pair
        bh.consume(s);
        s.dispatch().ended();
    }
}
