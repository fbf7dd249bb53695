package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.kv.index.SampleMemo;
import dev.continuum.router.kv.index.SampledChain;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.replicas.SyncPipe;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.DispatchedSequence;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SequenceEnd;
import dev.continuum.router.shim.SequenceListener;
import dev.continuum.router.shim.SharedPredictions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
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
import org.jspecify.annotations.Nullable;

/**
 * The cost of replica sync per routed request, for one sender and one receiving peer (docs/replicas.md): the three
 * listener calls the sequence drainer makes (dispatch, first token, end) with the record it allocates for them,
 * the sender's batching and encoding, and the peer's decoding and applying to its partition and its picker's rank
 * counters. {@value #REQUESTS} requests per invocation, sent in batches of {@code batch} requests (the requests a
 * replica routes within one {@code batch_interval}: 8 at 1,600 requests/s and 5 ms, 64 at 12,800). The score is
 * per request; the payload bytes per request are printed at tear-down. NATS's own framing and socket work are not
 * included (about 40 bytes per message: a share of a batch).
 *
 * <p>{@code promptBlocks} above 0 is approximate mode: each dispatch carries a prompt of that many 16-token blocks
 * (one of {@value #PROMPTS} distinct prompts, in turn), the sender samples it (router-kv's {@link SampledChain}) into
 * a predict event, and the peer stores it in router-kv's real predicted cache ({@link PredictedBlocks#predictPeer}),
 * as replica sync does; 0 is precise mode (no prediction travels). 960 blocks is the Mooncake trace's mean prompt
 * (15,325 tokens), 2,512 its first request's (40,160).
 *
 * <p>{@code sampledBy} is who chains the prompt into its sample. {@code lookup}: the picker's overlay lookup, as in
 * a replica that holds peers' samples (it chains every prompt it looks up to probe them, and leaves the keys in
 * router-kv's {@link SampleMemo}); the chain is the lookup's cost (PeerLookupBenchmark), and what is measured here
 * is the lookup leaving the keys and the sender taking them. {@code sender}: no lookup chained it (no peer's sample
 * held, or the keys were overwritten), so the sender chains the prompt itself, reading its hashes from the
 * {@value #PROMPTS} prompts in turn (1.3 MB at 2,512 blocks: colder than in the router, whose drainer has just
 * walked the same hashes to count shared blocks).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ReplicaSyncBenchmark {
    static final int REQUESTS = 256;

    static final int PROMPTS = 64;

    /**
     * Requests looked up between a request's lookup and the drain that samples it ({@code sampledBy=lookup}): the
     * drainer runs every 64 queued entries (three a request) or 10 ms, so the lookups of about 16 to 21 later
     * requests are in the memo meanwhile, and some of them take the slot the request's keys were left in.
     */
    static final int AHEAD = 16;

    @Param({"1", "8", "64"})
    public int batch;

    @Param({"0", "960", "2512"})
    public int promptBlocks;

    @Param({"lookup", "sender"})
    public String sampledBy = "lookup"; // JMH assigns each @Param value before @Setup runs

    /** Both replicas' side of the seam on router-kv's real parts; every namespace approximate. */
    private static final class Sharing implements SharedPredictions {
        final PredictedBlocks overlay = new PredictedBlocks(0x5EEDL, System::nanoTime, PredictedBlocks.Counts.NONE);
        long taken;
        long chained;

        /** As router-kv's PredictionSharing: the lookup's keys when it left them, else the prompt chained here. */
        @Override
        public SharedPredictions.@Nullable Sample sample(SampleKey rank, BlockHashes hashes) {
            long[] h = hashes.hashes();
            long[] keys = overlay.sampledByWalk().take(h);
            if (keys != null) {
                taken++;
                return new Sample(SampledChain.stride(h.length), keys);
            }
            chained++;
            return SampledChain.sampleOf(h);
        }

        @Override
        public void peerPredicted(int peer, SampleKey rank, int stride, long[] keys) {
            overlay.predictPeer(peer, rank.worker().namespace(), rank.worker().instanceId(), (int) rank.dpRank(),
                    stride, keys, TimeUnit.MINUTES.toNanos(1), 0);
        }

        @Override
        public void forgetPeer(int peer) {
            overlay.forgetPeer(peer);
        }
    }

    private SyncPipe pipe;
    private SequenceListener sender;
    private SampleKey[] decode;
    private SampleKey[] prefill;
    private long id;
    private long requests;
    private BlockHashes @Nullable [] prompts;
    /** Each prompt's keys as the picker's lookup chained them ({@code sampledBy=lookup}), else null. */
    private long @Nullable [][] looked;
    private @Nullable SampleMemo memo;
    private @Nullable Sharing sharing;

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
        if (promptBlocks > 0) {
            Sharing sharing = new Sharing();
            this.sharing = sharing;
            pipe.predictions(sharing, sharing);
            SplittableRandom random = new SplittableRandom(30);
            prompts = new BlockHashes[PROMPTS];
            long[][] keys = sampledBy.equals("lookup") ? new long[PROMPTS][] : null;
            memo = sharing.overlay.sampledByWalk();
            for (int i = 0; i < PROMPTS; i++) {
                long[] h = random.longs(promptBlocks).toArray();
                prompts[i] = new BlockHashes(16, h);
                if (keys != null) {
                    keys[i] = Objects.requireNonNull(SampledChain.sampleOf(h)).keys();
                }
            }
            looked = keys;
        }
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
            BlockHashes hashes = prompts == null ? null : prompts[(int) (n % PROMPTS)];
            long[] keys = looked == null ? null : looked[(int) ((n + AHEAD) % PROMPTS)];
            if (prompts != null && keys != null && memo != null) {
                // What a later request's lookup leaves (see sampledBy) before this one is drained.
                memo.put(prompts[(int) ((n + AHEAD) % PROMPTS)].hashes(), keys, keys.length);
            }
            sender.dispatched(new DispatchedSequence(n, decode[k], prefill[k], 1_500, 24, hashes, hashes));
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
        System.out.printf("%nreplica sync, batch of %d requests, prompts of %d blocks sampled by the %s: %.1f payload"
                + " bytes per request, %d messages%n", batch, promptBlocks, sampledBy, (double) pipe.bytes() / requests,
                pipe.messages());
        if (sharing != null) {
            System.out.printf("samples taken from the lookup: %d, chained by the sender: %d%n", sharing.taken,
                    sharing.chained);
        }
    }
}
