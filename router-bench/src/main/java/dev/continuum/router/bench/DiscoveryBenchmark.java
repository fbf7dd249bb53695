package dev.continuum.router.bench;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;

import com.sun.management.ThreadMXBean;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.EtcdConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.testing.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * Measured runs for docs/benchmarks.md (a program of the benchmarks jar, not JMH: numbers are recorded, never
 * asserted).
 *
 * <ul>
 *   <li>{@code reducer}: materialize 16,384 workers with cards and kv_metrics channels (49,152 records) from
 *   a cold reducer as one resync: time, bytes allocated, heap retained by the reducer and its view;</li>
 *   <li>{@code apply}: sustained put/delete rate on that fleet, applying only, and applying plus publishing
 *   to the registry after every event and after batches of 64;</li>
 *   <li>{@code etcd}: time from supervisor start to the first complete snapshot of 16,384 workers in a real
 *   etcd (Debian's etcd-server).</li>
 * </ul>
 */
public final class DiscoveryBenchmark {
    static final int WORKERS = 16_384;

    private DiscoveryBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        List<String> which = args.length == 0 ? List.of("reducer", "apply", "etcd") : Arrays.asList(args);
        System.out.printf(Locale.ROOT, "java %s, %d cpus, max heap %d MiB%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);
        if (which.contains("reducer")) {
            reducerColdStart();
        }
        if (which.contains("apply")) {
            sustainedApply();
        }
        if (which.contains("etcd")) {
            etcdStartToFirstSnapshot();
        }
    }

    static List<DiscoveryEvent.Put> fleet(String namespace) {
        List<DiscoveryEvent.Put> records = new ArrayList<>(3 * WORKERS);
        for (long i = 1; i <= WORKERS; i++) {
            long id = 0x7a00000000000000L + i * 7919;
            String component = i % 2 == 0 ? "decode" : "prefill";
            records.add(DiscoveryEvent.Put.of(endpointKey(namespace, component, "generate", id),
                    endpoint(namespace, component, "generate", id)));
            records.add(DiscoveryEvent.Put.of(cardKey(namespace, component, "generate", id),
                    model(namespace, component, "generate", id, card("Qwen/Qwen3-32B", i % 2 == 0 ? "Decode" : "Prefill"))));
            records.add(DiscoveryEvent.Put.of(channelKey(namespace, component, "generate", "kv_metrics", id + 1),
                    channel(namespace, component, "generate", "kv_metrics", id + 1, "tcp://10.0." + (i >> 8) + "." + (i & 255)
                            + ":41000")));
        }
        return records;
    }

    private static void reducerColdStart() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        List<DiscoveryEvent.Put> records = fleet("dynamo");
        long inputBytes = records.stream().mapToLong(p -> p.value().length + p.key().length()).sum();
        System.out.printf(Locale.ROOT, "reducer: %d records, %.1f MiB of keys and values%n", records.size(),
                inputBytes / 1048576.0);
        DiscoveryEvent.Resync resync = new DiscoveryEvent.Resync(records);
        List<Long> times = new ArrayList<>();
        for (int round = 0; round < 8; round++) {
            long heapBefore = settledHeap(memory);
            long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
            long start = System.nanoTime();
            DiscoveryReducer reducer = DiscoveryReducer.create(List.of("dynamo"), Clock.systemUTC(), DiscoveryCounters.NONE);
            reducer.apply(resync);
            FleetView view = reducer.view();
            long elapsed = System.nanoTime() - start;
            long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
            long retained = settledHeap(memory) - heapBefore;
            times.add(elapsed);
            System.out.printf(Locale.ROOT, "  round %d: %d workers, %d publishers in %.1f ms, allocated %.1f MiB, "
                            + "retained %.1f MiB%n", round, view.workers().size(), view.publishers().size(),
                    elapsed / 1e6, allocated / 1048576.0, retained / 1048576.0);
            if (view.workers().size() != WORKERS || reducer.view() != view) {
                throw new IllegalStateException("wrong fleet");
            }
        }
        times.sort(null);
        System.out.printf(Locale.ROOT, "reducer cold start: best %.1f ms, median %.1f ms (round 0 is the JVM's cold "
                + "start)%n", times.get(0) / 1e6, times.get(times.size() / 2) / 1e6);
    }

    private static void sustainedApply() {
        List<DiscoveryEvent.Put> records = fleet("dynamo");
        DiscoveryReducer reducer = DiscoveryReducer.create(List.of("dynamo"), Clock.systemUTC(), DiscoveryCounters.NONE);
        reducer.apply(new DiscoveryEvent.Resync(records));
        // A churn cycle: a worker's card changes, then it leaves (endpoint deleted) and comes back.
        List<DiscoveryEvent> cycle = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            DiscoveryEvent.Put endpointPut = records.get(3 * i);
            DiscoveryEvent.Put cardPut = records.get(3 * i + 1);
            String changedCard = new String(cardPut.value(), StandardCharsets.UTF_8)
                    .replace("\"max_num_seqs\":256", "\"max_num_seqs\":" + (257 + i % 7));
            cycle.add(DiscoveryEvent.Put.of(cardPut.key(), changedCard));
            cycle.add(new DiscoveryEvent.Delete(endpointPut.key()));
            cycle.add(endpointPut);
            cycle.add(cardPut);
        }
        MutableDynamoRegistry registry = MutableDynamoRegistry.create();
        MutableDynamoRegistry.Writer writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("dynamo"),
                reducer.view());
        // The first pass warms the JIT up and is not reported.
        for (int batch : new int[] {-1, 0, 1, 64}) {
            boolean warmup = batch < 0;
            if (warmup) {
                batch = 0;
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(batch == 1 ? 10 : 5).toNanos();
            long events = 0;
            long start = System.nanoTime();
            int index = 0;
            while (System.nanoTime() < deadline) {
                int size = batch == 0 ? 256 : batch;
                boolean changed = false;
                for (int k = 0; k < size; k++) {
                    changed |= reducer.apply(cycle.get(index));
                    index = (index + 1) % cycle.size();
                }
                events += size;
                if (batch > 0 && changed) {
                    writer.publish(reducer.view());
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (warmup) {
                continue;
            }
            System.out.printf(Locale.ROOT, "apply %s: %.0f events/s (%d events in %.1f s)%n",
                    batch == 0 ? "only" : "+ publish every " + batch + " event(s)", events / seconds, events, seconds);
        }
    }

    private static void etcdStartToFirstSnapshot() throws Exception {
        EtcdExtension etcd = EtcdExtension.plain();
        etcd.start();
        try {
            KV kv = etcd.writer().getKVClient();
            Semaphore inFlight = new Semaphore(256);
            long start = System.nanoTime();
            List<CompletableFuture<?>> writes = new ArrayList<>();
            for (DiscoveryEvent.Put put : fleet("bench")) {
                inFlight.acquire();
                writes.add(kv.put(ByteSequence.from(put.key(), StandardCharsets.UTF_8), ByteSequence.from(put.value()))
                        .whenComplete((r, e) -> inFlight.release()));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
            System.out.printf(Locale.ROOT, "etcd: wrote %d records in %.1f s (the fleet, not the router)%n",
                    writes.size(), (System.nanoTime() - start) / 1e9);
            long before = etcd.revision();

            for (int round = 0; round < 3; round++) {
                DiscoverySupervisor supervisor = DiscoverySupervisor.builder().build();
                long t0 = System.nanoTime();
                supervisor.start(true, DiscoveryConfig.etcd(EtcdConfig.defaults().withEndpoints(List.of(etcd.endpoint()))
                        .withNamespaces("bench", List.of())));
                DynamoRegistry registry = supervisor.registry();
                long seen = 0;
                while (registry.snapshot().workers().size() < WORKERS) {
                    seen = registry.awaitGeneration(seen, Duration.ofSeconds(60));
                }
                long firstSnapshot = System.nanoTime() - t0;
                long connectDeadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!registry.snapshot().connected()) {
                    if (System.nanoTime() - connectDeadline > 0) {
                        throw new IllegalStateException("the watches did not all open within 60 s");
                    }
                    Thread.onSpinWait();
                }
                long connected = System.nanoTime() - t0;
                supervisor.stop().join();
                System.out.printf(Locale.ROOT, "etcd round %d: first complete snapshot (%d workers, %d publishers) "
                                + "%.0f ms after start; all watches open at %.0f ms%n", round,
                        registry.snapshot().workers().size(), registry.snapshot().publishers().size(),
                        firstSnapshot / 1e6, connected / 1e6);
            }
            if (etcd.revision() != before) {
                throw new IllegalStateException("the router wrote to etcd");
            }
        } finally {
            etcd.stop();
        }
    }

    private static long settledHeap(MemoryMXBean memory) {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
