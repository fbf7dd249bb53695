package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replay harness on a small trace of its own: the text expansion keeps equal hash IDs equal token blocks (one
 * token per word, so a prompt is exactly its input length), and the harness-pinned modes run end to end against
 * a real fleet, the oracle's cache hit rate at least round-robin's.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KvReplayTest {
    private static SimTokenizer tokenizer;

    @TempDir
    Path dir;

    @BeforeAll
    static void load() {
        tokenizer = SimTokenizer.load(SimTokenizerTest.models().resolve("tokenizer.json"));
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void equalLeadingHashIdsGiveEqualLeadingTokenBlocksAndOneTokenPerWord() {
        TraceText text = TraceText.forTokenizer(tokenizer);
        MooncakeTrace.Request a = new MooncakeTrace.Request(0, 1300, 1, new long[] {7, 8, 9});
        MooncakeTrace.Request b = new MooncakeTrace.Request(0, 1536, 1, new long[] {7, 8, 42});

        int[] ta = tokenizer.encode(text.prompt(a, 100_000));
        int[] tb = tokenizer.encode(text.prompt(b, 100_000));

        assertThat(ta).hasSize(1300);
        assertThat(tb).hasSize(1536);
        assertThat(Arrays.copyOf(ta, 1024)).isEqualTo(Arrays.copyOf(tb, 1024));
        assertThat(ta[1024]).isNotEqualTo(tb[1024]); // blocks 9 and 42 differ from their first word (almost surely)
        // Inside the chat template, the shared blocks stay shared token blocks.
        TokenBlocks ba = TokenBlocks.of(tokenizer.promptTokens(chat(text.prompt(a, 100_000))), 16);
        TokenBlocks bb = TokenBlocks.of(tokenizer.promptTokens(chat(text.prompt(b, 100_000))), 16);
        int shared = 0;
        while (shared < ba.size() && ba.seqHashes()[shared] == bb.seqHashes()[shared]) {
            shared++;
        }
        assertThat(shared).isBetween(1024 / 16, (1024 + 16) / 16);
        assertThat(text.prompt(b, 600)).isEqualTo(text.prompt(b, 100_000).substring(0, text.prompt(b, 600).length()));
        assertThat(tokenizer.encode(text.prompt(b, 600))).hasSize(600);
    }

    @Test
    void theHarnessPinnedModesReplayATraceAndTheOracleHitsAtLeastAsOftenAsRoundRobin() throws Exception {
        // 24 requests over 4 s: 6 conversations, each asked 4 times with a growing history.
        List<String> lines = new ArrayList<>();
        for (int turn = 0; turn < 4; turn++) {
            for (int c = 0; c < 6; c++) {
                int conv = c;
                int blocks = 2 + turn;
                String ids = LongStream.range(0, blocks).map(i -> conv * 100L + i).mapToObj(Long::toString)
                        .collect(Collectors.joining(", "));
                lines.add("{\"timestamp\": " + (turn * 1000 + c * 150) + ", \"input_length\": " + (blocks * 512)
                        + ", \"output_length\": 3, \"hash_ids\": [" + ids + "]}");
            }
        }
        Path trace = Files.write(dir.resolve("trace.jsonl"), lines);
        Path tokenizerJson = SimTokenizerTest.models().resolve("tokenizer.json");

        KvReplay.Result rr = replay(trace, tokenizerJson, "round-robin");
        KvReplay.Result oracle = replay(trace, tokenizerJson, "oracle");
        KvReplay.Result ttft = replay(trace, tokenizerJson, "oracle-ttft");

        for (KvReplay.Result r : List.of(rr, oracle, ttft)) {
            assertThat(r.sent()).isEqualTo(24);
            assertThat(r.failed()).isZero();
            assertThat(LongStream.of(r.perWorker()).sum()).isEqualTo(24);
            assertThat(r.p50Ms()).isPositive();
            assertThat(r.p90Ms()).isGreaterThanOrEqualTo(r.p50Ms());
            assertThat(r.p99Ms()).isGreaterThanOrEqualTo(r.p90Ms());
        }
        assertThat(rr.perWorker()).containsOnly(6);
        // Each conversation's later turns find their history on the worker that served it: 3 of 4 turns hit.
        assertThat(oracle.hitRate()).isGreaterThan(0.5).isGreaterThanOrEqualTo(rr.hitRate());
        assertThat(oracle.row()).startsWith("| oracle | 24 | 0 | ");
        assertThat(ttft.hitRate()).isGreaterThanOrEqualTo(rr.hitRate());
        assertThat(ttft.row()).startsWith("| oracle-ttft | 24 | 0 | ");

        // The bound: turns 2 to 4 of each conversation find all but their newest block (2 + 3 + 4 of 3 + 4 + 5
        // blocks), turn 1 nothing: 54 of 84 blocks; with no queue, a TTFT is the uncached tokens' prefill.
        KvReplay.Result bound = replay(trace, tokenizerJson, "bound");
        assertThat(bound.hitRate()).isCloseTo(54.0 / 84, within(1e-9));
        assertThat(bound.perWorker()).isEmpty();
        long perToken = Math.round(bound.perTokenTraceUs() * 1000 / 2); // fleet nanos per token at speedup 2
        assertThat(bound.p50Ms()).isCloseTo(512 * perToken * 2 / 1e6, within(1e-6));
        assertThat(bound.p99Ms()).isCloseTo(2 * 512 * perToken * 2 / 1e6, within(1e-6));
        assertThat(bound.row()).startsWith("| bound | 24 | 0 | 0.643 | ").endsWith("| (no fleet) |");
    }

    /**
     * The same trace against four simulated plain vLLM servers ({@code --fleet vllm}): they list themselves for the
     * router's configuration, round robin spreads evenly, and the oracle, reading the cache state each request will
     * meet, finds each conversation's history: turns 2 to 4 of 6 conversations reuse their earlier turns.
     */
    @Test
    void thePinnedModesReplayATraceAgainstPlainVllmServers() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int turn = 0; turn < 4; turn++) {
            for (int c = 0; c < 6; c++) {
                int conv = c;
                int blocks = 2 + turn;
                String ids = LongStream.range(0, blocks).map(i -> conv * 100L + i).mapToObj(Long::toString)
                        .collect(Collectors.joining(", "));
                lines.add("{\"timestamp\": " + (turn * 1000 + c * 150) + ", \"input_length\": " + (blocks * 512)
                        + ", \"output_length\": 3, \"hash_ids\": [" + ids + "]}");
            }
        }
        Path trace = Files.write(dir.resolve("trace.jsonl"), lines);
        Path tokenizerJson = SimTokenizerTest.models().resolve("tokenizer.json");

        KvReplay.Result rr = replay(trace, tokenizerJson, "round-robin", "--fleet", "vllm");
        KvReplay.Result oracle = replay(trace, tokenizerJson, "oracle", "--fleet", "vllm");

        for (KvReplay.Result r : List.of(rr, oracle)) {
            assertThat(r.sent()).isEqualTo(24);
            assertThat(r.failed()).isZero();
            assertThat(LongStream.of(r.perWorker()).sum()).isEqualTo(24);
            assertThat(r.p90Ms()).isGreaterThanOrEqualTo(r.p50Ms()).isPositive();
        }
        assertThat(rr.perWorker()).containsOnly(6);
        assertThat(oracle.hitRate()).isGreaterThan(0.5).isGreaterThan(rr.hitRate());
        assertThat(Files.readAllLines(dir.resolve("oracle").resolve("servers.txt")))
                .hasSize(4).allMatch(l -> l.matches("vllm-\\d http://127\\.0\\.0\\.1:\\d+ tcp://\\S+ tcp://\\S+"));
    }

    @Test
    void aModeThroughTheRouterNeedsItsUrl() {
        assertThatThrownBy(() -> KvReplay.parse(new String[] {"replay", "--trace", "t", "--tokenizer", "x",
            "--root", "r", "--mode", "load-only"})).hasMessageContaining("--router");
        assertThatThrownBy(() -> KvReplay.parse(new String[] {"replay", "--mode", "fastest"}))
                .hasMessageContaining("kv-aware, load-only, round-robin, oracle, oracle-ttft or bound");
    }

    @Test
    void decodeTimeAndStreamingAreReadAndBounded() {
        String[] base = {"replay", "--trace", "t", "--tokenizer", "x", "--root", "r", "--mode", "oracle"};
        KvReplay.Args args = KvReplay.parse(concat(base, "--decode-ms", "3000", "--stream", "on"));
        assertThat(args.decodeMs()).isEqualTo(3000);
        assertThat(args.stream()).isTrue();
        assertThat(KvReplay.parse(base).stream()).isFalse();
        assertThatThrownBy(() -> KvReplay.parse(concat(base, "--decode-ms", "-1"))).hasMessageContaining("--decode-ms");
        assertThatThrownBy(() -> KvReplay.parse(concat(base, "--decode-ms", "600001")))
                .hasMessageContaining("--decode-ms");
        assertThat(KvReplay.body("m", "hi", 1, true)).contains("\"stream\":true");
        assertThat(KvReplay.body("m", "hi", 1)).doesNotContain("stream");
    }

    private static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }

    private KvReplay.Result replay(Path trace, Path tokenizerJson, String mode, String... more) throws Exception {
        List<String> argv = new ArrayList<>(List.of("replay", "--trace", trace.toString(), "--tokenizer",
            tokenizerJson.toString(), "--root", dir.resolve(mode).toString(), "--mode", mode, "--workers", "4",
            "--speedup", "2", "--kv-blocks", "4096"));
        argv.addAll(List.of(more));
        KvReplay.Args args = KvReplay.parse(argv.toArray(String[]::new));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(log, true, StandardCharsets.UTF_8);
        return args.fleet() == KvReplay.Fleet.VLLM ? VllmReplay.run(args, out) : KvReplay.run(args, out);
    }

    private static String chat(String content) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}";
    }
}
