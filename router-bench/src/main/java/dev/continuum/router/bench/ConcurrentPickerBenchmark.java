package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Concurrent picks on one shared picker, two threads (the event loops of a 2-core machine): the fleet and
 * samples of {@link PickerBenchmark}, but each thread keeps up to 32 requests open (64 in flight in all) and
 * ends the oldest before each new pick, so both threads keep recording dispatches into, and ending them on,
 * the same few least-loaded ranks. What this measures beyond {@code PickerBenchmark.pick} is the ledger's
 * behaviour under contention: the shared cursors and each rank's dispatch record.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Threads(2)
public class ConcurrentPickerBenchmark {
    private static final long SAMPLED_AT = TimeUnit.SECONDS.toNanos(10);
    private static final int OPEN_PER_THREAD = 32;

    @Param({"8", "256"})
    public int candidateRanks;

    private volatile long clock;
    private KvMetricsFeed feed;
    private DynamoSnapshot snapshot;
    private DynamoWorkerPicker picker;
    private PickRequest request;

    /** One thread's open requests, ended oldest first. */
    @State(Scope.Thread)
    public static class Open {
        final Selection.Dispatch[] ring = new Selection.Dispatch[OPEN_PER_THREAD];
        int next;

        @TearDown
        public void endAll() {
            for (int i = 0; i < ring.length; i++) {
                if (ring[i] != null) {
                    ring[i].ended();
                    ring[i] = null;
                }
            }
        }
    }

    @Setup
    public void setup() throws Exception {
        List<DynamoWorker> workers = Fleets.disaggregated(candidateRanks);
        int dp = Fleets.dpSize(candidateRanks);
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
        // After the samples: every dispatch stays unanswered, so the ledger keeps accumulating per rank.
        clock = SAMPLED_AT + TimeUnit.MILLISECONDS.toNanos(1);
        snapshot = Fleets.snapshot(workers);
        picker = DynamoWorkerPicker.loadBased(feed.store(), () -> clock, new SimpleMeterRegistry());
        request = new PickRequest(ChatBodies.MODEL, Set.of(Fleets.NS), 1_500);
    }

    @TearDown
    public void tearDown() throws Exception {
        feed.close();
    }

    @Benchmark
    public void pick(Open open, Blackhole bh) {
        Selection.Dispatch oldest = open.ring[open.next];
        if (oldest != null) {
            oldest.ended();
        }
        Selection s = Objects.requireNonNull(picker.pick(snapshot, request)); // Fleets always yields a pair
        bh.consume(s);
        open.ring[open.next] = s.dispatch();
        open.next = (open.next + 1) % OPEN_PER_THREAD;
    }
}
