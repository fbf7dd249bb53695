package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The prompts a rank is prefilling, as the KV-aware pick reads them for a request sharing their prefix. */
class PrefillingPrefixesTest {
    private static final int BS = 16;

    /** Chained hashes: the first {@code shared} equal to the common chain, the rest the request's own. */
    private static BlockHashes prompt(int blocks, int shared, long own) {
        long[] h = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            h[i] = i < shared ? 1000 + i : own * 1_000_003L + i;
        }
        return new BlockHashes(BS, h);
    }

    @Test
    void theCommonPrefixOfChainedHashesIsFoundByBinarySearch() {
        SplittableRandom random = new SplittableRandom(7);
        for (int run = 0; run < 2_000; run++) {
            int n = random.nextInt(0, 40);
            int shared = random.nextInt(0, n + 1);
            long[] a = prompt(n, shared, 1).hashes();
            long[] b = prompt(n, shared, 2).hashes();
            int limit = random.nextInt(0, n + 1);
            int linear = 0;
            while (linear < limit && a[linear] == b[linear]) {
                linear++;
            }
            assertThat(PrefillingPrefixes.commonPrefix(a, b, limit)).isEqualTo(linear);
        }
    }

    @Test
    void theSharedBlocksAndTheSharedTokensMayComeFromDifferentPrefills() {
        PrefillingPrefixes p = new PrefillingPrefixes();
        p.started(prompt(20, 12, 1), 2 * BS); // shares 12 blocks, but only 2 blocks' tokens are left to compute
        p.started(prompt(10, 6, 2), 10 * BS); // shares 6 blocks, all of them still computed
        BlockHashes request = prompt(14, 12, 3);
        assertThat(p.sharedBlocks(request)).as("the longest shared prefix, whatever the depth held").isEqualTo(12);
        assertThat(p.sharedTokens(request, 8)).as("the most tokens one prefill computes for the request")
                .isEqualTo(6 * BS);
        assertThat(p.sharedTokens(request, 0)).isZero();
        long before = allocated();
        long sum = 0;
        for (int i = 0; i < 10_000; i++) {
            sum += p.sharedTokens(request, 8) + p.sharedBlocks(request);
        }
        assertThat(allocated() - before).as("no allocation").isLessThan(1024);
        assertThat(sum).isEqualTo(10_000L * (6 * BS + 12));
    }

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .getCurrentThreadAllocatedBytes();
    }

    @Test
    void aRequestSharesTheTokensOfAPrefillUpToTheDepthTheRankHolds() {
        PrefillingPrefixes p = new PrefillingPrefixes();
        BlockHashes first = prompt(10, 8, 1);
        p.started(first, 10 * BS);

        BlockHashes follower = prompt(12, 8, 2);
        assertThat(p.sharedTokens(follower, 12)).as("8 shared blocks").isEqualTo(8 * BS);
        assertThat(p.sharedTokens(follower, 5)).as("only as deep as the rank holds").isEqualTo(5 * BS);
        assertThat(p.sharedTokens(follower, 0)).isZero();
        assertThat(p.sharedBlocks(follower)).isEqualTo(8);
        assertThat(p.sharedTokens(first, 10)).as("a request never shares with itself").isZero();
        assertThat(p.sharedTokens(prompt(12, 0, 3), 12)).as("another prefix").isZero();
        assertThat(p.sharedTokens(new BlockHashes(32, follower.hashes()), 12)).as("another block size").isZero();

        p.ended(prompt(10, 8, 1)); // equal hashes, another request: not this prefill
        assertThat(p.sharedTokens(follower, 12)).isEqualTo(8 * BS);
        p.ended(first);
        assertThat(p.sharedTokens(follower, 12)).isZero();
        assertThat(p.sharedBlocks(follower)).isZero();
    }

    @Test
    void sharedTokensNeverExceedWhatThePrefillStillComputes() {
        PrefillingPrefixes p = new PrefillingPrefixes();
        // The first request itself held 6 blocks already: it computes only 4 blocks' worth of tokens.
        p.started(prompt(10, 10, 1), 4 * BS);
        assertThat(p.sharedTokens(prompt(10, 10, 2), 10)).isEqualTo(4 * BS);
    }

    @Test
    void whenEverySlotIsTakenOnlyALargerPrefillMakesRoom() {
        PrefillingPrefixes p = new PrefillingPrefixes();
        BlockHashes big = prompt(20, 20, 1);
        p.started(big, 20 * BS);
        // Followers of the same prefix, each prefilling only its own last block, fill the other slots.
        for (int i = 0; i < PrefillingPrefixes.SLOTS - 1; i++) {
            p.started(prompt(21, 20, 10 + i), BS);
        }
        p.started(prompt(21, 20, 99), BS);
        assertThat(p.sharedTokens(prompt(21, 20, 100), 20)).as("the prefix's prefill is kept").isEqualTo(20 * BS);

        BlockHashes other = prompt(30, 0, 5);
        p.started(other, 30 * BS);
        assertThat(p.sharedTokens(prompt(30, 0, 5), 30)).as("a larger prefill replaced a follower")
                .isEqualTo(30 * BS);
        assertThat(p.sharedTokens(prompt(21, 20, 100), 20)).isEqualTo(20 * BS);
    }

    @Test
    void nothingIsRememberedOfAPrefillWithoutTokensOrBlocks() {
        PrefillingPrefixes p = new PrefillingPrefixes();
        p.started(prompt(10, 10, 1), 0);
        p.started(new BlockHashes(BS, new long[0]), 100);
        assertThat(p.sharedTokens(prompt(10, 10, 2), 10)).isZero();
    }
}
