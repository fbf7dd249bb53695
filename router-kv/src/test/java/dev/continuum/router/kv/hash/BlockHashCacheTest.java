package dev.continuum.router.kv.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Block hashes by prefix: the same hashes as hashing every block, only the new blocks hashed once a prefix is cached. */
class BlockHashCacheTest {
    private static final ByteBoundedCache.Key FIRST = new ByteBoundedCache.Key(1, 2);
    private static final ByteBoundedCache.Key SECOND = new ByteBoundedCache.Key(3, 4);

    private static int[] tokens(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = (i * 7919) % 151_000;
        }
        return t;
    }

    @Test
    void aLaterTurnTakesThePrefixsHashesAndEqualsHashingEveryBlock() {
        AtomicInteger hits = new AtomicInteger();
        AtomicInteger misses = new AtomicInteger();
        BlockHashCache cache = new BlockHashCache(1 << 20, ByteBoundedCache.Listener.NONE,
                hit -> (hit ? hits : misses).incrementAndGet());
        BlockHasher hasher = BlockHasher.of(null, "salt");
        int[] turn1 = tokens(1000);
        long[] first = cache.blockHashes(hasher, turn1, 16, new PromptPrefix(null, 0, FIRST, 990));
        assertThat(first).containsExactly(hasher.blockHashes(turn1, 16));
        assertThat(cache.size()).isOne();

        int[] turn2 = Arrays.copyOf(turn1, 1500);
        for (int i = 990; i < 1500; i++) {
            turn2[i] = 42 + i; // the turn's new tokens (the prefix's 990 are the same)
        }
        long[] second = cache.blockHashes(hasher, turn2, 16, new PromptPrefix(FIRST, 990, SECOND, 1490));
        assertThat(second).containsExactly(hasher.blockHashes(turn2, 16));
        assertThat(hits).hasValue(1);

        // Another seed or block size never takes these hashes.
        BlockHasher other = BlockHasher.of("lora", null);
        assertThat(cache.blockHashes(other, turn2, 16, new PromptPrefix(FIRST, 990, null, 0)))
                .containsExactly(other.blockHashes(turn2, 16));
        assertThat(cache.blockHashes(hasher, turn2, 32, new PromptPrefix(FIRST, 990, null, 0)))
                .containsExactly(hasher.blockHashes(turn2, 32));
        assertThat(misses).hasValue(2);
    }

    @Test
    void withoutAHintOrWithTheCacheOffEveryBlockIsHashed() {
        BlockHashCache off = new BlockHashCache(0, ByteBoundedCache.Listener.NONE, BlockHashCache.Stats.NONE);
        int[] t = tokens(100);
        BlockHasher h = BlockHasher.unsalted();
        assertThat(off.blockHashes(h, t, 16, new PromptPrefix(null, 0, FIRST, 96))).containsExactly(h.blockHashes(t, 16));
        assertThat(off.size()).isZero();
        BlockHashCache on = new BlockHashCache(1 << 20, ByteBoundedCache.Listener.NONE, BlockHashCache.Stats.NONE);
        assertThat(on.blockHashes(h, t, 16, null)).containsExactly(h.blockHashes(t, 16));
        assertThat(on.size()).isZero();
    }

    @Test
    void aStreamOfNewPrefixesStaysWithinTheBound() {
        BlockHashCache cache = new BlockHashCache(64 << 10, ByteBoundedCache.Listener.NONE, BlockHashCache.Stats.NONE);
        int[] t = tokens(4000);
        for (int i = 0; i < 500; i++) {
            cache.blockHashes(BlockHasher.unsalted(), t, 16,
                    new PromptPrefix(null, 0, new ByteBoundedCache.Key(i, ~i), 4000));
            assertThat(cache.bytes()).isLessThanOrEqualTo(64 << 10);
        }
    }
}
