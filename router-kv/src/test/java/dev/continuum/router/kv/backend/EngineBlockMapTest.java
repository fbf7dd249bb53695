package dev.continuum.router.kv.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.hash.BlockHasher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Engine block hashes mapped to the router's chained hash: checked against a second XXH3 (python3-xxhash) that
 * chains blocks the way a prompt's blocks are chained, and against a prompt hashed whole by {@link BlockHasher}.
 */
class EngineBlockMapTest {
    private static final String BACKEND = "vllm-1";
    private final BackendKvIndex index = new BackendKvIndex();

    private static EngineKvDecoder.Event stored(long[] engine, Long parent, int[] tokens, int blockSize) {
        return new EngineKvDecoder.Event(KvCacheEvent.Kind.STORED, engine, parent, tokens, blockSize);
    }

    private static int[] tokens(SplittableRandom random, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = random.nextInt(0, 152_000);
        }
        return t;
    }

    @Test
    void aPromptMatchesBlocksStoredInPiecesUnderEngineHashes() {
        EngineBlockMap map = new EngineBlockMap(BACKEND, index, 100);
        int[] prompt = tokens(new SplittableRandom(7), 16 * 5 + 3);
        // The engine stores the prompt's 5 blocks in two events, naming them by hashes of its own.
        int[] first = java.util.Arrays.copyOfRange(prompt, 0, 32);
        int[] rest = java.util.Arrays.copyOfRange(prompt, 32, 80);
        assertThat(map.stored(stored(new long[] {-5, 9}, null, first, 16))).isEqualTo(EngineBlockMap.Stored.APPLIED);
        assertThat(map.stored(stored(new long[] {3, 4, 77}, 9L, rest, 16))).isEqualTo(EngineBlockMap.Stored.APPLIED);

        long[] blocks = BlockHasher.unsalted().blockHashes(prompt, 16);
        long[] chained = BlockHasher.sequenceHashes(blocks, blocks.length);
        assertThat(index.overlap(BACKEND, chained)).isEqualTo(5);
        assertThat(index.blockSize(BACKEND)).isEqualTo(16);

        // Removal by engine hash resolves through the map: the prompt's cached prefix now ends before block 3.
        map.removed(new long[] {4, 12345});
        assertThat(index.overlap(BACKEND, chained)).isEqualTo(3);
        assertThat(map.size()).isEqualTo(4);

        map.clear();
        assertThat(index.overlap(BACKEND, chained)).isZero();
        assertThat(map.size()).isZero();
        assertThat(index.tracks(BACKEND)).isFalse();
    }

    @Test
    void refusesWhatItCannotNameAndStaysBounded() {
        EngineBlockMap map = new EngineBlockMap(BACKEND, index, 3);
        int[] two = tokens(new SplittableRandom(1), 32);
        assertThat(map.stored(stored(new long[] {1}, null, new int[0], 16))).isEqualTo(EngineBlockMap.Stored.NO_TOKENS);
        assertThat(map.stored(stored(new long[] {1, 2}, 42L, two, 16)))
                .isEqualTo(EngineBlockMap.Stored.UNKNOWN_PARENT);
        assertThat(map.stored(stored(new long[] {1, 2}, null, two, 16))).isEqualTo(EngineBlockMap.Stored.APPLIED);
        assertThat(map.stored(stored(new long[] {3, 4}, 2L, two, 16))).isEqualTo(EngineBlockMap.Stored.OVER_CAPACITY);
        assertThat(map.size()).isEqualTo(2);
        assertThat(index.size(BACKEND)).isEqualTo(2);
        // Storing the same engine blocks again is no growth.
        assertThat(map.stored(stored(new long[] {1, 2}, null, two, 16))).isEqualTo(EngineBlockMap.Stored.APPLIED);
    }

    /** python3-xxhash chains each event's blocks onto its parent's router hash; the two must agree block by block. */
    @Test
    void agreesWithPythonXxhashOnChainedEvents() throws Exception {
        SplittableRandom random = new SplittableRandom(20_261_207);
        EngineBlockMap map = new EngineBlockMap(BACKEND, index, 10_000);
        StringBuilder input = new StringBuilder();
        List<Long> engineOrder = new ArrayList<>();
        List<Long> parents = new ArrayList<>();
        long nextEngine = 1000;
        for (int e = 0; e < 60; e++) {
            int blockSize = 16;
            int blocks = random.nextInt(1, 5);
            int[] t = tokens(random, blocks * blockSize);
            Long parent = parents.isEmpty() || random.nextInt(4) == 0 ? null
                    : parents.get(random.nextInt(parents.size()));
            long[] engine = new long[blocks];
            for (int b = 0; b < blocks; b++) {
                engine[b] = nextEngine++;
                engineOrder.add(engine[b]);
            }
            assertThat(map.stored(stored(engine, parent, t, blockSize))).isEqualTo(EngineBlockMap.Stored.APPLIED);
            parents.add(engine[blocks - 1]);
            StringBuilder line = new StringBuilder().append(parent == null ? "-" : parent).append('\t');
            for (int b = 0; b < blocks; b++) {
                line.append(b == 0 ? "" : ",").append(engine[b]);
            }
            line.append('\t');
            for (int k = 0; k < t.length; k++) {
                line.append(k == 0 ? "" : ",").append(t[k]);
            }
            input.append(line).append('\n');
        }
        List<String> expected = new ArrayList<>();
        for (long engine : engineOrder) {
            expected.add(engine + "=" + Long.toUnsignedString(map.routerHash(engine)));
        }
        assertThat(python(input.toString())).containsExactlyElementsOf(expected);
    }

    private static List<String> python(String input) throws IOException, InterruptedException {
        String script = """
                import struct, sys, xxhash
                router = {}
                for line in sys.stdin.read().splitlines():
                    parent, engine, toks = line.split('\\t')
                    engine = [int(h) for h in engine.split(',')]
                    toks = [int(t) for t in toks.split(',')]
                    prev = None if parent == '-' else router[int(parent)]
                    bs = len(toks) // len(engine)
                    for b, h in enumerate(engine):
                        local = xxhash.xxh3_64_intdigest(struct.pack('<%dI' % bs, *toks[b * bs:(b + 1) * bs]), seed=1337)
                        cur = local if prev is None else xxhash.xxh3_64_intdigest(struct.pack('<QQ', prev, local), seed=1337)
                        router[h] = cur
                        prev = cur
                        print('%d=%d' % (h, cur))
                """;
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", script).redirectErrorStream(true).start();
        p.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out.lines().toList();
    }
}
