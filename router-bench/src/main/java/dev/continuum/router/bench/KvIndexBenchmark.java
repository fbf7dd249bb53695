package dev.continuum.router.bench;

import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.RadixIndex;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The KV radix index on one core ({@code RadixIndex}, docs/kv-routing.md "The index").
 *
 * <ul>
 *   <li>{@code replay}: a Mooncake-shaped replay ({@link KvTrace}; {@code -p trace=<path>} reads a real trace).
 *       Per request: {@code find_matches} over its blocks, the request goes to the rank with the longest
 *       match (ties by fewest blocks held), which stores the blocks past its match as one {@code stored}
 *       event anchored at its last matched block, and, past its capacity, evicts its oldest blocks in one
 *       {@code removed} event. The aux counters, per second: {@code ops} = lookups + events (our first unit);
 *       {@code blockOps} = blocks looked up + blocks stored, the unit of Dynamo's Mooncake benchmark and of
 *       its published indexer rate (docs/kv-routing.md "How Dynamo counts index operations"); and their
 *       parts ({@code lookups}, {@code events}, {@code lookupBlocks}, {@code storedBlocks}, and
 *       {@code blocks}, blocks stored or removed).</li>
 *   <li>{@code findMatches} (sample mode, for p99): one lookup of a 64-block chain in an index holding
 *       1,048,576 blocks (16,384 chains of 64 blocks over {@code indexedRanks} ranks, 32 by default; past 63
 *       ranks a lookup of a chain held by a rank id of 63 or more takes the sorted-merge walk).</li>
 * </ul>
 */
@State(Scope.Thread)
@OutputTimeUnit(TimeUnit.SECONDS)
public class KvIndexBenchmark {
    /** Per-iteration operation counts, reported by JMH as rates. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Ops {
        public long ops;
        public long blockOps;
        public long lookups;
        public long events;
        public long lookupBlocks;
        public long storedBlocks;
        public long blocks;

        @Setup(Level.Iteration)
        public void reset() {
            ops = 0;
            blockOps = 0;
            lookups = 0;
            events = 0;
            lookupBlocks = 0;
            storedBlocks = 0;
            blocks = 0;
        }
    }

    @Param({"synthetic"})
    public String trace = "synthetic";

    @Param({"8"})
    public int ranks;

    /** Blocks each rank's engine holds before evicting (a 512-token block each). */
    @Param({"16384"})
    public int capacity;

    /** Ranks holding the findMatches index's chains (one owner per chain). */
    @Param({"32"})
    public int indexedRanks;

    private KvTrace replayTrace;
    private BlockHashes[] replayRequests;
    private RadixIndex replayIndex;
    private int[] rankIds;
    private long[][] held; // per rank, a FIFO ring of engine hashes it stores, for eviction
    private int[] heldHead;
    private int[] heldSize;
    private long[] evict;
    private OverlapScores scores;
    private int next;

    private RadixIndex bigIndex;
    private BlockHashes[] bigChains;
    private OverlapScores bigScores;
    private SplittableRandom random;

    @Setup
    public void setup() {
        replayTrace = KvTrace.load(trace, 50_000, 42);
        replayIndex = new RadixIndex(IndexLimits.DEFAULT);
        replayRequests = new BlockHashes[replayTrace.requests()];
        for (int r = 0; r < replayRequests.length; r++) {
            replayRequests[r] = new BlockHashes(512, replayTrace.tokens[r]);
        }
        rankIds = new int[ranks];
        held = new long[ranks][capacity];
        heldHead = new int[ranks];
        heldSize = new int[ranks];
        evict = new long[capacity];
        for (int r = 0; r < ranks; r++) {
            rankIds[r] = replayIndex.addRank(1000 + r, 0);
        }
        scores = new OverlapScores(64);

        bigIndex = new RadixIndex(IndexLimits.DEFAULT);
        int chains = 16_384;
        bigChains = new BlockHashes[chains];
        long[] engine = new long[64];
        int[] bigRanks = new int[indexedRanks];
        for (int r = 0; r < bigRanks.length; r++) {
            bigRanks[r] = bigIndex.addRank(2000 + r, 0);
        }
        for (int c = 0; c < chains; c++) {
            long[] tokens = new long[64];
            for (int i = 0; i < 64; i++) {
                tokens[i] = KvTrace.mix(c * 64L + i + 1);
                engine[i] = KvTrace.mix(~(c * 64L + i));
            }
            bigChains[c] = new BlockHashes(16, tokens);
            bigIndex.store(bigRanks[c % bigRanks.length], false, 0, engine, tokens, 0, 64);
        }
        if (bigIndex.nodes() != chains * 64) {
            throw new IllegalStateException("expected 1,048,576 blocks, got " + bigIndex.nodes());
        }
        bigScores = new OverlapScores(64);
        random = new SplittableRandom(1);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    public int replay(Ops ops) {
        int r = next;
        next = next + 1 == replayTrace.requests() ? 0 : next + 1;
        long[] tokens = replayTrace.tokens[r];
        long[] engine = replayTrace.engine[r];
        replayIndex.findMatches(replayRequests[r], scores);
        ops.lookups++;
        ops.ops++;
        ops.lookupBlocks += tokens.length;
        ops.blockOps += tokens.length;
        int best = 0;
        int bestDepth = -1;
        for (int k = 0; k < ranks; k++) {
            int depth = scores.matchedBlocksOf(1000 + k, 0);
            if (depth > bestDepth || (depth == bestDepth && heldSize[k] < heldSize[best])) {
                best = k;
                bestDepth = depth;
            }
        }
        int from = Math.min(bestDepth, tokens.length);
        if (from < tokens.length) {
            replayIndex.store(rankIds[best], from > 0, from > 0 ? engine[from - 1] : 0, engine, tokens, from,
                    tokens.length - from);
            ops.events++;
            ops.ops++;
            ops.blocks += tokens.length - from;
            ops.storedBlocks += tokens.length - from;
            ops.blockOps += tokens.length - from;
            int evicted = remember(best, engine, from, tokens.length - from);
            if (evicted > 0) {
                ops.events++;
                ops.ops++;
                ops.blocks += evicted; // a removal counts as one op and no block ops, as upstream counts it
            }
        }
        return bestDepth;
    }

    /** Records the rank's new blocks; past its capacity, evicts its oldest in one removal. */
    private int remember(int rank, long[] engine, int from, int count) {
        long[] ring = held[rank];
        int evicted = 0;
        for (int i = from; i < from + count; i++) {
            if (heldSize[rank] == capacity) {
                evict[evicted++] = ring[heldHead[rank]];
                heldHead[rank] = (heldHead[rank] + 1) % capacity;
                heldSize[rank]--;
            }
            ring[(heldHead[rank] + heldSize[rank]) % capacity] = engine[i];
            heldSize[rank]++;
        }
        if (evicted > 0) {
            replayIndex.remove(rankIds[rank], evict, 0, evicted);
        }
        return evicted;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int findMatches() {
        bigIndex.findMatches(bigChains[random.nextInt(bigChains.length)], bigScores);
        return bigScores.size();
    }
}
