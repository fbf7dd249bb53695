package dev.continuum.router.bench;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The discovery reducer (EtcdRecordReducer) and the registry (AtomicDynamoRegistry) on a fleet of 16,384
 * workers, each an Endpoint record, a Model record with its card and a kv_metrics EventChannel record
 * (49,152 records, upstream's DiscoveryInstance and card shapes):
 * <ul>
 *   <li>{@code coldResync}: a new reducer materializes the whole fleet from one resync (milliseconds per op);</li>
 *   <li>{@code churnEvent}: one event of a churn cycle applied to the materialized fleet (a worker's card
 *       changes, its endpoint is deleted, then put back, then its card restored);</li>
 *   <li>{@code churnEventAndPublish}: the same, then the reducer's view published to the registry when it
 *       changed (a new generation per event, the worst case of an unbatched watcher).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReducerBenchmark {
    @Param({"16384"})
    public int workers;

    private DiscoveryEvent.Resync resync;
    private List<DiscoveryEvent> cycle;
    private DiscoveryReducer reducer;
    private MutableDynamoRegistry.Writer writer;
    private int next;

    @Setup
    public void setup() {
        List<DiscoveryEvent.Put> records = DiscoveryRecords.fleet(Fleets.NS, workers);
        resync = new DiscoveryEvent.Resync(records);
        cycle = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            DiscoveryEvent.Put endpoint = records.get(3 * i);
            DiscoveryEvent.Put card = records.get(3 * i + 1);
            String changed = new String(card.value(), StandardCharsets.UTF_8)
                    .replace("\"max_num_seqs\":256", "\"max_num_seqs\":" + (257 + i % 7));
            cycle.add(DiscoveryEvent.Put.of(card.key(), changed));
            cycle.add(new DiscoveryEvent.Delete(endpoint.key()));
            cycle.add(endpoint);
            cycle.add(card);
        }
        reducer = DiscoveryReducer.create(List.of(Fleets.NS), Clock.systemUTC(), DiscoveryCounters.NONE);
        reducer.apply(resync);
        if (reducer.view().workers().size() != workers) {
            throw new IllegalStateException(reducer.view().workers().size() + " workers, expected " + workers);
        }
        writer = MutableDynamoRegistry.create().reconfigure(true, DiscoverySourceKind.ETCD, List.of(Fleets.NS),
                reducer.view());
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public FleetView coldResync() {
        DiscoveryReducer cold = DiscoveryReducer.create(List.of(Fleets.NS), Clock.systemUTC(),
                DiscoveryCounters.NONE);
        cold.apply(resync);
        return cold.view();
    }

    @Benchmark
    public boolean churnEvent() {
        DiscoveryEvent e = cycle.get(next);
        next = next + 1 == cycle.size() ? 0 : next + 1;
        return reducer.apply(e);
    }

    @Benchmark
    public void churnEventAndPublish(Blackhole bh) {
        DiscoveryEvent e = cycle.get(next);
        next = next + 1 == cycle.size() ? 0 : next + 1;
        if (reducer.apply(e)) {
            bh.consume(writer.publish(reducer.view()));
        }
    }
}
