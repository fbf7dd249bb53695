package dev.continuum.router.bench;

import dev.continuum.router.kv.hash.BlockHasher;
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
 * KV block hashing of one prompt: XXH3-64 over every complete block of {@code tokens} token IDs
 * ({@code BlockHasher}, the hash seed of a request with a cache salt). {@code intoArray} writes into a reused array (the
 * per-block cost, which must allocate nothing); {@code perRequest} also allocates the request's result array, as
 * the dispatch hook does once per request and block size.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BlockHashBenchmark {
    @Param({"8000"})
    public int tokens;

    @Param({"16", "64"})
    public int blockSize;

    private int[] ids;
    private long[] out;
    private BlockHasher hasher;

    @Setup
    public void setup() {
        SplittableRandom random = new SplittableRandom(7);
        ids = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            ids[i] = random.nextInt(152_000);
        }
        out = new long[tokens / blockSize];
        hasher = BlockHasher.of(null, "tenant-a");
    }

    @Benchmark
    public long intoArray() {
        hasher.blockHashes(ids, ids.length, blockSize, out);
        return out[out.length - 1];
    }

    @Benchmark
    public long[] perRequest() {
        return hasher.blockHashes(ids, blockSize);
    }
}
