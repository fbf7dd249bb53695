package dev.continuum.router.bench;

import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.selection.BackendKvScorer;
import dev.continuum.router.kv.selection.KvBackendChooser;
import dev.continuum.router.proxy.BackendChooser;
import java.util.ArrayList;
import java.util.List;
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
 * What KV-aware selection among plain backends adds per request beyond the prompt pipeline (issue 31's goal:
 * at most 2 µs at 64 backends): {@code choose} scores every candidate ({@link BackendKvScorer}: its cached
 * prefix from the {@link BackendKvIndex}, its in-flight count), once per pick on the event loop; {@code chainPrompt}
 * turns the prompt's block hashes into the boxed chained hashes the index is keyed by, once per request off the loop. The index holds {@code heldBlocks} other blocks
 * per backend; backend {@code i} holds the first {@code i % (blocks / 2)} blocks of the prompt, so the walks are as
 * long as a busy fleet's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BackendSelectionBenchmark {
    @Param({"64"})
    public int backends;

    /** Prompt blocks: 64 blocks of 16 tokens, about a 1,000-token prompt. */
    @Param({"64"})
    public int blocks;

    @Param({"4096"})
    public int heldBlocks;

    private record Candidate(String name, int inFlight) implements BackendChooser.Candidate {
    }

    private final BackendKvIndex index = new BackendKvIndex();
    private BackendKvScorer scorer;
    private List<Candidate> candidates;
    private long[] blockHashes;
    private long[] prompt;
    private Long[] keys;

    @Setup
    public void setup() {
        SplittableRandom random = new SplittableRandom(31);
        int[] tokens = new int[blocks * 16];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(152_000);
        }
        blockHashes = BlockHasher.unsalted().blockHashes(tokens, 16);
        prompt = BlockHasher.sequenceHashes(blockHashes, blockHashes.length);
        candidates = new ArrayList<>();
        for (int b = 0; b < backends; b++) {
            String name = "vllm-" + b;
            candidates.add(new Candidate(name, random.nextInt(8)));
            long[] other = new long[heldBlocks];
            for (int i = 0; i < heldBlocks; i++) {
                other[i] = random.nextLong();
            }
            index.store(name, other, Integer.MAX_VALUE);
            int held = b % Math.max(1, blocks / 2);
            long[] prefix = java.util.Arrays.copyOf(prompt, held);
            index.store(name, prefix, Integer.MAX_VALUE);
        }
        keys = BackendKvIndex.keys(prompt);
        scorer = new BackendKvScorer(index);
    }

    @Benchmark
    public long choose() {
        return scorer.choose(candidates, keys, 1.0, 1.0);
    }

    /**
     * Once per request, off the event loop: chaining the prompt's block hashes and boxing them for the walks
     * ({@link KvBackendChooser#promptKeys}: one pass, the chaining step written out). The block hashes themselves are
     * the prompt pipeline's ({@code BlockHashCache}), as the Dynamo path's are, and are not counted here.
     */
    @Benchmark
    public Long[] chainPrompt() {
        return KvBackendChooser.promptKeys(blockHashes);
    }
}
