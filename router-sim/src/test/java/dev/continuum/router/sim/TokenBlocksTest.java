package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The simulator's block hashes against upstream's own unit-test constants (ai-dynamo/dynamo
 * {@code lib/tokens/src/lib.rs}, block size 4, seed 1337) and against Debian's python3-xxhash.
 */
class TokenBlocksTest {
    @Test
    void upstreamsAnchorsForBlockSizeFour() {
        TokenBlocks b = TokenBlocks.of(IntStream.rangeClosed(1, 12).toArray(), 4);

        assertThat(Long.toUnsignedString(b.tokenHashes()[0])).isEqualTo("14643705804678351452");
        assertThat(Long.toUnsignedString(b.tokenHashes()[1])).isEqualTo("16777012769546811212");
        assertThat(Long.toUnsignedString(b.tokenHashes()[2])).isEqualTo("483935686894639516");
        assertThat(b.seqHashes()[0]).isEqualTo(b.tokenHashes()[0]);
        assertThat(Long.toUnsignedString(b.seqHashes()[1])).isEqualTo("4945711292740353085");
        assertThat(Long.toUnsignedString(b.seqHashes()[2])).isEqualTo("12583592247330656132");
    }

    @Test
    void pythonsXxhashComputesTheSameBlockAndSequenceHashes() throws Exception {
        Random random = new Random(1337);
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            // Token IDs across the whole u32 range, the top bit included.
            prompts.add(IntStream.range(0, 16 + random.nextInt(100)).map(t -> random.nextInt()).toArray());
        }
        String input = prompts.stream().map(p -> IntStream.of(p).mapToObj(Integer::toUnsignedString)
                .collect(Collectors.joining(" "))).collect(Collectors.joining("\n"));
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", """
                import struct, sys, xxhash
                for line in sys.stdin.read().splitlines():
                    ids = [int(t) for t in line.split()]
                    seq, out = None, []
                    for b in range(len(ids) // 16):
                        local = xxhash.xxh3_64_intdigest(struct.pack('<16I', *ids[b * 16:b * 16 + 16]), seed=1337)
                        seq = local if seq is None else xxhash.xxh3_64_intdigest(struct.pack('<QQ', seq, local), seed=1337)
                        out.append('%d:%d' % (local, seq))
                    print(' '.join(out))
                """).redirectErrorStream(true).start();
        py.getOutputStream().write(input.getBytes(StandardCharsets.US_ASCII));
        py.getOutputStream().close();
        List<String> lines = new String(py.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).lines().toList();
        assertThat(py.waitFor()).as(String.join("\n", lines)).isZero();

        assertThat(lines).hasSize(prompts.size());
        for (int i = 0; i < prompts.size(); i++) {
            TokenBlocks b = TokenBlocks.of(prompts.get(i), 16);
            String ours = IntStream.range(0, b.size()).mapToObj(k -> Long.toUnsignedString(b.tokenHashes()[k]) + ":"
                    + Long.toUnsignedString(b.seqHashes()[k])).collect(Collectors.joining(" "));
            assertThat(ours).as("prompt %d", i).isEqualTo(lines.get(i));
        }
    }
}
