package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The per-rank prefix cache: cached prefixes, least-recently-used eviction (chain tails first), capacity. */
class PrefixCacheTest {
    private static final int BLOCK = 4;

    /** {@code blocks} blocks of 4 tokens, from token {@code first} on. */
    private static TokenBlocks chain(int first, int blocks) {
        return TokenBlocks.of(IntStream.range(first, first + blocks * BLOCK).toArray(), BLOCK);
    }

    @Test
    void aServedPromptIsCachedAndItsSharedPrefixCountsOnTheNextOne() {
        PrefixCache cache = new PrefixCache(100);
        int[] a = IntStream.range(0, 5 * BLOCK).toArray();
        int[] b = a.clone();
        b[3 * BLOCK] = 99_999; // b shares a's first 3 blocks, then differs

        PrefixCache.Admission first = cache.admit(TokenBlocks.of(a, BLOCK));
        assertThat(first.cached()).isZero();
        assertThat(first.stored()).isEqualTo(5);
        assertThat(first.evicted()).isEmpty();

        PrefixCache.Admission second = cache.admit(TokenBlocks.of(b, BLOCK));
        assertThat(second.cached()).isEqualTo(3);
        assertThat(second.stored()).isEqualTo(5);
        assertThat(cache.size()).isEqualTo(7);
        assertThat(cache.cachedPrefix(TokenBlocks.of(a, BLOCK))).isEqualTo(5);
    }

    @Test
    void evictionTakesTheLeastRecentlyUsedChainTailFirstSoACachedBlockKeepsItsParent() {
        PrefixCache cache = new PrefixCache(4);
        TokenBlocks a = chain(0, 3);
        TokenBlocks b = chain(1000, 3);
        cache.admit(a);

        PrefixCache.Admission admitted = cache.admit(b);

        // a's blocks were touched last to first, so a's tail is the oldest: a3, then a2 go; a's root stays.
        assertThat(admitted.evicted()).containsExactly(a.seqHashes()[2], a.seqHashes()[1]);
        assertThat(cache.cachedPrefix(a)).isEqualTo(1);
        assertThat(cache.cachedPrefix(b)).isEqualTo(3);
        assertThat(cache.size()).isEqualTo(4);
    }

    @Test
    void aHitRefreshesTheWholePrefixSoTheOtherChainIsEvicted() {
        PrefixCache cache = new PrefixCache(6);
        TokenBlocks a = chain(0, 3);
        TokenBlocks b = chain(1000, 3);
        cache.admit(a);
        cache.admit(b);
        cache.admit(a); // a is now the most recent

        PrefixCache.Admission admitted = cache.admit(chain(2000, 2));

        assertThat(admitted.evicted()).containsExactly(b.seqHashes()[2], b.seqHashes()[1]);
        assertThat(cache.cachedPrefix(a)).isEqualTo(3);
    }

    @Test
    void aPromptLongerThanTheCacheStoresItsFirstBlocksOnly() {
        PrefixCache cache = new PrefixCache(3);
        TokenBlocks long5 = chain(0, 5);

        PrefixCache.Admission admitted = cache.admit(long5);

        assertThat(admitted.stored()).isEqualTo(3);
        assertThat(admitted.evicted()).isEmpty();
        assertThat(cache.cachedPrefix(long5)).isEqualTo(3);
    }

    @Test
    void aTrailingPartialBlockIsNotABlock() {
        assertThat(TokenBlocks.of(IntStream.range(0, 2 * BLOCK + 3).toArray(), BLOCK).size()).isEqualTo(2);
    }

    @Test
    void clearEmptiesTheCacheAndSaysWhetherAnythingWasThere() {
        PrefixCache cache = new PrefixCache(10);
        assertThat(cache.clear()).isFalse();
        cache.admit(chain(0, 2));
        assertThat(cache.clear()).isTrue();
        assertThat(cache.size()).isZero();
    }

    @Test
    void aCacheHoldsAtLeastOneBlock() {
        assertThatThrownBy(() -> new PrefixCache(0)).hasMessageContaining("capacity");
    }
}
