package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.replicas.SyncPipe;
import dev.continuum.router.shim.DispatchedSequence;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SequenceEnd;
import dev.continuum.router.shim.SequenceListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of replica sync per routed request, for one sender and one receiving peer (docs/replicas.md): the three
 * listener calls the sequence drainer makes (dispatch, first token, end) with the record it allocates for them,
 * the sender's batching and encoding, and the peer's decoding and applying to its partition and its picker's rank
 * counters. {@value #REQUESTS} requests per invocation, sent in batches of {@code batch} requests (the requests a
 * replica routes within one {@code batch_interval}: 8 at 1,600 requests/s and 5 ms, 64 at 12,800). The score is
 * per request; the payload bytes per request are printed at tear-down. NATS's own framing and socket work are not
 * included (about 40 bytes per message: a share of a batch).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ReplicaSyncBenchmark {
    static final int REQUESTS = 256;

    @Param({"1", "8", "64"})
    public int batch;

    private SyncPipe pipe;
    private SequenceListener sender;
    private SampleKey[] decode;
    private SampleKey[] prefill;
    private long id;
    private long requests;

    @Setup
    public void setup() {
        List<DynamoWorker> workers = Fleets.disaggregated(16);
        DynamoSnapshot snapshot = Fleets.snapshot(workers);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        LoadBasedPicking peer = LoadBasedPicking.create(LoadSupervisor.builder(meters).build().store(),
                System::nanoTime, meters, MutableDynamoRegistry.create());
        // One pick builds the peer's candidate index, so every rank has counters to add to.
        Selection s = Objects.requireNonNull(peer.picker().pick(snapshot,
                new PickRequest(ChatBodies.MODEL, Set.of(Fleets.NS), 1_500)));
        s.dispatch().ended();
        pipe = new SyncPipe(peer.activeSequences(), meters, 256, 64 * 1024);
        sender = pipe.sender();
        List<SampleKey> d = new ArrayList<>();
        List<SampleKey> p = new ArrayList<>();
        int dp = Fleets.dpSize(16);
        for (DynamoWorker w : workers) {
            for (int r = 0; r < dp; r++) {
                (w.role().wireName().equals("prefill") ? p : d).add(new SampleKey(w.id(), r));
            }
        }
        decode = d.toArray(SampleKey[]::new);
        prefill = p.toArray(SampleKey[]::new);
    }

    @Benchmark
    @OperationsPerInvocation(REQUESTS)
    public long syncRequests() {
        long moved = 0;
        for (int i = 0; i < REQUESTS; i++) {
            long n = ++id;
            int k = (int) (n % decode.length);
            sender.dispatched(new DispatchedSequence(n, decode[k], prefill[k], 1_500, 24, null, null));
            sender.firstToken(n);
            sender.ended(n, SequenceEnd.COMPLETED);
            if ((i + 1) % batch == 0) {
                moved += pipe.pump();
            }
        }
        moved += pipe.pump();
        requests += REQUESTS;
        return moved;
    }

    @TearDown(Level.Trial)
    public void report() {
        System.out.printf("%nreplica sync, batch of %d requests: %.1f payload bytes per request, %d messages%n",
                batch, (double) pipe.bytes() / requests, pipe.messages());
    }
}
