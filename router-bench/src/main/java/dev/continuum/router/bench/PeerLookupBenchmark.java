package dev.continuum.router.bench;

import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.kv.index.SampledChain;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.SharedPredictions;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The picker's overlay lookup (docs/kv-routing.md, "Peers' predictions") with and without peers' sampled
 * predictions held: {@value #PROMPTS} prompts of {@code blocks} blocks, each predicted on one of {@value #RANKS}
 * ranks by this replica ({@code own}) and, with {@code peers} above 0, sampled on those ranks by that many peers;
 * each lookup is one of the prompts (a full-depth match). What the picking thread pays per KV-scored request.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PeerLookupBenchmark {
    static final int PROMPTS = 64;
    static final int RANKS = 8;
    private static final long TTL = TimeUnit.HOURS.toNanos(1);

    @Param({"960"})
    public int blocks;

    @Param({"0", "2"})
    public int peers;

    private PredictedBlocks overlay;
    private long[][] prompts;
    private final OverlapScores out = new OverlapScores(64);
    private int next;

    @Setup
    public void setup() {
        overlay = new PredictedBlocks(0x5EEDL, System::nanoTime, PredictedBlocks.Counts.NONE);
        SplittableRandom random = new SplittableRandom(30);
        prompts = new long[PROMPTS][];
        for (int i = 0; i < PROMPTS; i++) {
            prompts[i] = random.longs(blocks).toArray();
            overlay.predict("ns", i % RANKS, 0, prompts[i], TTL, 0);
            SharedPredictions.Sample sample = SampledChain.sampleOf(prompts[i]);
            for (int p = 1; p <= peers && sample != null; p++) {
                overlay.predictPeer(p, "ns", (i + p) % RANKS, 0, sample.stride(), sample.keys(), TTL, 0);
            }
        }
    }

    @Benchmark
    public int lookup() {
        out.clear();
        overlay.deepen(prompts[next++ & (PROMPTS - 1)], out);
        return out.size();
    }
}
