package dev.continuum.router.bench;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.LoadStore;
import java.util.HashSet;
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
 * The load store (ConcurrentLoadStore, behind {@code LoadSupervisor.store()}) holding one sample per rank
 * of 512 workers x 8 dp ranks, or 8 ranks of one worker:
 * <ul>
 *   <li>{@code subscriptionToStore}: one kv_metrics message for the next rank (round robin) from socket
 *       bytes to the store, through the supervisor's own subscription: ZMTP client, frame and ActiveLoad
 *       decoders, sequence check, live gate, the store's insert and the subscription's written-keys set.
 *       Compare with KvMetricsDecodeBenchmark.zmtpFramesAndDecode for the store's share;</li>
 *   <li>{@code latest}: {@code LoadStore.latest(worker, rank)}, a lookup by key (the picker reads each candidate through the slot its index holds instead).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LoadStoreBenchmark {
    private static final int DP = 8;

    @Param({"8", "4096"})
    public int ranks;

    private KvMetricsFeed feed;
    private LoadStore store;
    private KvMetricsWire[] messages;
    private WorkerId[] workers;
    private int next;

    @Setup
    public void setup() throws Exception {
        int workerCount = ranks / DP;
        workers = new WorkerId[workerCount];
        Set<WorkerId> live = new HashSet<>();
        for (int i = 0; i < workerCount; i++) {
            workers[i] = new WorkerId(Fleets.NS, 0x7a00_0000_0000_1000L + i);
            live.add(workers[i]);
        }
        feed = new KvMetricsFeed(live, System::nanoTime);
        store = feed.store();
        messages = new KvMetricsWire[ranks];
        for (int i = 0; i < ranks; i++) {
            messages[i] = KvMetricsWire.message(KvMetricsFeed.PUBLISHER, 0, workers[i / DP].instanceId(), i % DP,
                    (i * 37L) % 500, (i * 7919L) % 4000);
            messages[i].sequence(feed.nextSequence());
            feed.send(messages[i]);
        }
        if (store.size() != ranks) {
            throw new IllegalStateException("store holds " + store.size() + " samples, expected " + ranks);
        }
    }

    @TearDown
    public void tearDown() throws Exception {
        feed.close();
    }

    @Benchmark
    public void subscriptionToStore() {
        KvMetricsWire m = messages[next];
        next = next + 1 == messages.length ? 0 : next + 1;
        m.sequence(feed.nextSequence());
        feed.send(m);
    }

    @Benchmark
    public void latest(Blackhole bh) {
        int i = next;
        next = i + 1 == messages.length ? 0 : i + 1;
        bh.consume(store.latest(workers[i / DP], i % DP));
    }
}
