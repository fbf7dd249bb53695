package dev.continuum.router.kv.selection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.hash.BlockHasher;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A prompt's keys, chained and boxed in one pass, are the chained hashes the index is keyed by: the same values as
 * chaining first and boxing after (the path they replace), for any prompt length.
 */
class KvBackendChooserKeysTest {
    @Test
    void promptKeysAreTheBoxedChainedHashes() {
        SplittableRandom random = new SplittableRandom(31);
        assertThat(KvBackendChooser.promptKeys(new long[0])).isEmpty();
        for (int n = 1; n <= 200; n += 7) {
            int[] tokens = new int[n * 16 + random.nextInt(16)];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = random.nextInt(152_000);
            }
            long[] blocks = BlockHasher.unsalted().blockHashes(tokens, 16);
            assertThat(KvBackendChooser.promptKeys(blocks)).as("%d blocks", n)
                    .containsExactly(BackendKvIndex.keys(BlockHasher.sequenceHashes(blocks, blocks.length)));
        }
    }
}
