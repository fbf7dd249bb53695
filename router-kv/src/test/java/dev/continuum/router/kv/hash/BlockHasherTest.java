package dev.continuum.router.kv.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BlockHasherTest {

    /** ai-dynamo/dynamo lib/tokens/src/lib.rs, its tests' HASH_* and SEQ_HASH_* constants (block size 4, seed 1337). */
    @Test
    void reproducesUpstreamsUnitTestConstants() {
        long[] blocks = BlockHasher.unsalted().blockHashes(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 4);

        assertThat(blocks).containsExactly(Long.parseUnsignedLong("14643705804678351452"),
                Long.parseUnsignedLong("16777012769546811212"), Long.parseUnsignedLong("483935686894639516"));
        assertThat(BlockHasher.sequenceHashes(blocks, 3)).containsExactly(Long.parseUnsignedLong("14643705804678351452"),
                Long.parseUnsignedLong("4945711292740353085"), Long.parseUnsignedLong("12583592247330656132"));
    }

    @Test
    void hashesCompleteBlocksOnlyAndAnEmptySeedIsNoSeed() {
        assertThat(BlockHasher.unsalted().blockHashes(new int[15], 16)).isEmpty();
        assertThat(BlockHasher.unsalted().blockHashes(new int[33], 16)).hasSize(2);
        assertThat(BlockHasher.of("", "")).isSameAs(BlockHasher.unsalted());
        assertThat(BlockHasher.seed("lora", null)).isNotEqualTo(BlockHasher.BASE_SEED);
        assertThat(BlockHasher.supported(15)).isFalse();
        assertThat(BlockHasher.supported(16)).isTrue();
        assertThat(BlockHasher.supported(65_536)).isTrue();
        assertThat(BlockHasher.supported(65_537)).isFalse();
    }

    /**
     * A second XXH3-64 (Debian's python3-xxhash, bin/test installs it) over 100 seeded token sequences, with and
     * without a LoRA name and a cache salt, computing the hash seed and the block bytes itself.
     */
    @Test
    void agreesWithPythonXxhashOnSeededSequences() throws Exception {
        SplittableRandom random = new SplittableRandom(20_261_202);
        StringBuilder input = new StringBuilder();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            int blockSize = 16 << random.nextInt(3);
            int[] tokens = new int[random.nextInt(1, 6 * blockSize)];
            for (int k = 0; k < tokens.length; k++) {
                // Token IDs are u32: cover the top bit too.
                tokens[k] = i % 10 == 0 ? random.nextInt() : random.nextInt(0, 152_000);
            }
            String lora = i % 3 == 1 ? "adapter-" + i : "";
            String salt = i % 4 == 2 ? "tenant-\u00e9-" + i : "";
            StringBuilder line = new StringBuilder().append(blockSize).append('\t').append(hex(lora)).append('\t')
                    .append(hex(salt)).append('\t');
            for (int k = 0; k < tokens.length; k++) {
                line.append(k == 0 ? "" : ",").append(Integer.toUnsignedString(tokens[k]));
            }
            input.append(line).append('\n');
            long[] hashes = BlockHasher.of(lora, salt).blockHashes(tokens, blockSize);
            StringBuilder out = new StringBuilder();
            for (int k = 0; k < hashes.length; k++) {
                out.append(k == 0 ? "" : ",").append(Long.toUnsignedString(hashes[k]));
            }
            expected.add(out.toString());
        }

        assertThat(python(input.toString())).containsExactlyElementsOf(expected);
    }

    /**
     * The written-out chaining step against two other XXH3-64 implementations of the same 16 bytes: the hashing
     * library's, and python3-xxhash's; over random words and the edge values (top bits set, zero, all ones).
     */
    @Test
    void theChainingStepIsXxh3OfTheTwoWords() throws Exception {
        LongHashFunction library = LongHashFunction.xx3(BlockHasher.BASE_SEED);
        SplittableRandom random = new SplittableRandom(31);
        long[] edges = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1, BlockHasher.BASE_SEED};
        StringBuilder input = new StringBuilder();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            long parent = i < 36 ? edges[i / 6] : random.nextLong();
            long block = i < 36 ? edges[i % 6] : random.nextLong();
            long chained = BlockHasher.chain(parent, block);
            assertThat(chained).as("pair %d", i).isEqualTo(library.hashLongs(new long[] {parent, block}));
            if (i < 200) {
                input.append(Long.toUnsignedString(parent)).append(' ').append(Long.toUnsignedString(block))
                        .append('\n');
                expected.add(Long.toUnsignedString(chained));
            }
        }
        String script = """
                import struct, sys, xxhash
                for line in sys.stdin.read().splitlines():
                    a, b = (int(x) for x in line.split())
                    print(xxhash.xxh3_64_intdigest(struct.pack('<QQ', a, b), seed=1337))
                """;
        assertThat(runPython(script, input.toString())).containsExactlyElementsOf(expected);
    }

    private static String hex(String s) {
        StringBuilder b = new StringBuilder("-");
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            b.append(String.format("%02x", x & 0xff));
        }
        return b.toString();
    }

    private static List<String> python(String input) throws IOException, InterruptedException {
        return runPython("""
                import struct, sys, xxhash
                M = (1 << 64) - 1
                for line in sys.stdin.read().splitlines():
                    bs, lora, salt, toks = line.split('\\t')
                    bs = int(bs); lora = bytes.fromhex(lora[1:]); salt = bytes.fromhex(salt[1:])
                    toks = [int(t) for t in toks.split(',')]
                    seed = 1337
                    if lora: seed = (seed + xxhash.xxh3_64_intdigest(lora, seed=0)) & M
                    if salt: seed = (seed + xxhash.xxh3_64_intdigest(salt, seed=1)) & M
                    out = []
                    for b in range(len(toks) // bs):
                        data = struct.pack('<%dI' % bs, *toks[b * bs:(b + 1) * bs])
                        out.append(str(xxhash.xxh3_64_intdigest(data, seed=seed)))
                    print(','.join(out))
                """, input);
    }

    private static List<String> runPython(String script, String input) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", script).redirectErrorStream(true).start();
        p.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out.lines().toList();
    }
}
