package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.kv.index.PredictedBlocks.Outcome;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Peers' sampled predictions in the overlay (replica sync, approximate mode): the deepest sampled position a
 * prompt shares, per peer partition, with the overlay's TTL and bounds. The sender's side runs on another index's
 * secret root, as another replica's would.
 */
class PeerPredictionsTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long TTL = 60 * SECOND;

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final Map<Outcome, Long> counted = new EnumMap<>(Outcome.class);
    private final RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
    private final PredictedBlocks predicted = new PredictedBlocks(index.rootPath(), now::get,
            (outcome, blocks) -> counted.merge(outcome, blocks, Long::sum));
    private final PredictedOverlap overlap = new PredictedOverlap(index, predicted);
    private final OverlapScores out = new OverlapScores(64);

    /** Blocks {@code 1000*seed + i}: prompts of one seed share their prefix. */
    private static long[] prompt(int seed, int blocks) {
        long[] h = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            h[i] = 1000L * seed + i + 1;
        }
        return h;
    }

    /** {@code base}'s first {@code shared} blocks, then blocks of its own. */
    private static long[] diverging(long[] base, int shared, int blocks) {
        long[] h = Arrays.copyOf(base, blocks);
        for (int i = shared; i < blocks; i++) {
            h[i] = -1 - i;
        }
        return h;
    }

    /** What a peer sends for {@code hashes} (computed without this overlay's root). */
    private void peerPredicts(int peer, long worker, long[] hashes, long capacity) {
        int stride = SampledChain.stride(hashes.length);
        long[] keys = SampledChain.sample(hashes, hashes.length, stride);
        assertThat(keys).isNotNull();
        predicted.predictPeer(peer, "ns", worker, 0, stride, keys, TTL, capacity);
    }

    private int depth(long worker, long[] hashes) {
        overlap.findMatches(new BlockHashes(16, hashes), out);
        return out.matchedBlocksOf(worker, 0);
    }

    @Test
    void aPromptMatchesAPeersDeepestSampledPositionItShares() {
        long[] a = prompt(1, 100); // stride 16: keys at blocks 16, 32, ..., 96
        peerPredicts(1, 7, a, 0);
        assertThat(depth(7, a)).isEqualTo(96);
        assertThat(depth(7, diverging(a, 40, 100))).as("shares 40 blocks: the sample at 32").isEqualTo(32);
        assertThat(depth(7, diverging(a, 10, 100))).as("shorter than one stride: nothing").isZero();
        assertThat(depth(7, Arrays.copyOf(a, 70))).as("a shorter prompt of the same prefix").isEqualTo(64);
        assertThat(depth(7, prompt(2, 100))).isZero();

        long[] b = prompt(3, 1_000); // 62 keys at 16 and 31 at 32 are too many: stride 64, 15 keys
        assertThat(SampledChain.stride(b.length)).isEqualTo(64);
        peerPredicts(1, 8, b, 0);
        assertThat(depth(8, diverging(b, 500, 1_000))).as("the loss is below one stride").isEqualTo(448);
    }

    @Test
    void ownChainsAndPeersCombineAsTheDeeperPerRankAndAPeersDepartureTakesOnlyItsPart() {
        long[] a = prompt(1, 64);
        predicted.predict("ns", 7, 0, Arrays.copyOf(a, 5), TTL, 0);
        peerPredicts(1, 7, a, 0);
        peerPredicts(2, 9, a, 0);
        assertThat(depth(7, a)).isEqualTo(64);
        assertThat(out.matchedBlocksOf(9, 0)).isEqualTo(64);

        predicted.forgetPeer(1);
        assertThat(depth(7, a)).as("own prediction stays").isEqualTo(5);
        assertThat(out.matchedBlocksOf(9, 0)).as("the other peer's part stays").isEqualTo(64);
        assertThat(counted.get(Outcome.DEPARTED)).isEqualTo(4);

        predicted.forgetPeer(2);
        assertThat(depth(9, a)).isZero();
        assertThat(depth(7, a)).isEqualTo(5);
    }

    @Test
    void peersPredictionsExpireWithTheirTtlAndLeaveWithTheirWorker() {
        long[] a = prompt(1, 32);
        peerPredicts(1, 7, a, 0);
        peerPredicts(1, 8, a, 0);
        now.addAndGet(TTL);
        assertThat(depth(7, a)).isEqualTo(32);
        now.addAndGet(1);
        assertThat(depth(7, a)).as("past the TTL").isZero();

        now.addAndGet(-1);
        predicted.retain((ns, worker, rank) -> worker != 8);
        assertThat(depth(8, a)).as("a departed worker's peer predictions leave with it").isZero();
        assertThat(depth(7, a)).isEqualTo(32);
    }

    @Test
    void aPeerIsBoundedWhateverItSends() {
        long[] a = prompt(1, 96);
        predicted.predictPeer(1, "ns", 7, 0, 24, SampledChain.sample(a, 96, 16), TTL, 0);
        predicted.predictPeer(1, "ns", 7, 0, 16, new long[0], TTL, 0);
        predicted.predictPeer(0, "ns", 7, 0, 16, SampledChain.sample(a, 96, 16), TTL, 0);
        assertThat(predicted.entries()).as("a bad stride, no keys, peer 0: nothing stored").isZero();

        peerPredicts(1, 7, a, 32); // a rank of 32 blocks holds two entries of 16
        assertThat(predicted.entries()).isEqualTo(2);
        assertThat(depth(7, a)).isEqualTo(32);

        // A peer flooding one rank with distinct prompts keeps at most MAX_PEER_ENTRIES of them.
        for (int seed = 10; seed < 10 + 2 * PredictedBlocks.MAX_PEER_ENTRIES / SampledChain.MAX_KEYS; seed++) {
            long[] p = prompt(seed, 16 * SampledChain.MAX_KEYS);
            predicted.predictPeer(2, "ns", 9, 0, 16, SampledChain.sample(p, p.length, 16), TTL, 0);
        }
        assertThat(predicted.entries()).isEqualTo(2 + PredictedBlocks.MAX_PEER_ENTRIES);
        assertThat(counted.get(Outcome.EVICTED)).isPositive();
    }

    @Test
    void aLookupWhilePeersAreHeldLeavesThePromptsSampleForTheSenderOnce() {
        long[] a = prompt(1, 2_512);
        long[] b = prompt(2, 40);
        assertThat(depth(7, a)).isZero();
        assertThat(predicted.sampledByWalk().take(a)).as("no peer held: the lookup chains nothing").isNull();

        peerPredicts(1, 8, prompt(3, 64), 0);
        depth(7, a);
        depth(7, b);
        long[] expected = SampledChain.sample(a, a.length, SampledChain.stride(a.length));
        assertThat(predicted.sampledByWalk().take(Arrays.copyOf(a, a.length)))
                .as("another array with the same blocks is not the looked-up prompt").isNull();
        assertThat(predicted.sampledByWalk().take(a)).containsExactly(expected);
        assertThat(predicted.sampledByWalk().take(a)).as("taken once").isNull();
        assertThat(predicted.sampledByWalk().take(b)).containsExactly(SampledChain.sample(b, 40, 16));
        long[] shorter = prompt(4, 15);
        depth(7, shorter);
        assertThat(predicted.sampledByWalk().take(shorter)).as("shorter than one stride: no sample").isNull();
    }

    @Test
    void aPeerRepeatingItsPredictionsKeepsARingAboutTwiceItsLiveEntries() {
        // A peer of a fleet without card capacities (each rank bounded only by MAX_PEER_ENTRIES) predicting the
        // same 8 prompts on one rank over and over, as a conversation trace does: every prediction refreshes its
        // keys and leaves a stale ring record behind. The ring used to grow to twice MAX_PEER_ENTRIES records
        // before it reclaimed any; it reclaims the stale ones first now, and every prompt still matches in full.
        long[][] prompts = new long[8][];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = prompt(20 + i, 960);
        }
        for (int round = 0; round < 2_000; round++) {
            peerPredicts(1, 7, prompts[round % prompts.length], 0);
        }
        int live = predicted.entries();
        assertThat(live).isEqualTo(8 * 15);
        assertThat(predicted.ringRecords()).as("records for %d live entries", live).isLessThanOrEqualTo(4 * 128);
        assertThat(counted.getOrDefault(Outcome.EVICTED, 0L)).as("refreshes never evict").isZero();
        for (long[] p : prompts) {
            assertThat(depth(7, p)).isEqualTo(960);
        }
    }

    /**
     * The sampled chain against a second implementation written from docs/replicas.md ("Approximate mode") in
     * python3: the stride rule and every key, over random prompts (edge values included) of 1 to 20,000 blocks.
     */
    @Test
    void samplesAgreeWithAPythonImplementationOfTheDocumentedChain() throws Exception {
        java.util.SplittableRandom random = new java.util.SplittableRandom(30);
        long[] edges = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE};
        StringBuilder input = new StringBuilder();
        java.util.List<String> expected = new java.util.ArrayList<>();
        for (int p = 0; p < 60; p++) {
            int blocks = p < 10 ? 16 * p + p : random.nextInt(1, 20_000);
            long[] h = new long[blocks];
            for (int i = 0; i < blocks; i++) {
                h[i] = random.nextInt(20) == 0 ? edges[random.nextInt(edges.length)] : random.nextLong();
                input.append(i == 0 ? "" : " ").append(Long.toUnsignedString(h[i]));
            }
            input.append('\n');
            int stride = SampledChain.stride(blocks);
            long[] keys = SampledChain.sample(h, blocks, stride);
            StringBuilder line = new StringBuilder().append(stride);
            for (long k : keys == null ? new long[0] : keys) {
                line.append(' ').append(Long.toUnsignedString(k));
            }
            expected.add(line.toString());
        }
        String script = String.join("\n",
                "import sys",
                "M = (1 << 64) - 1",
                "def step(p, t):",
                "    z = p ^ t",
                "    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M",
                "    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M",
                "    return z ^ (z >> 31)",
                "P = [step(0, j + 1) | 1 for j in range(16)]",
                "for line in sys.stdin:",
                "    h = [int(x) for x in line.split()]",
                "    stride = 16",
                "    while len(h) // stride > 24 and stride < 512:",
                "        stride *= 2",
                "    w, keys = 0x436F6E74696E7575, []",
                "    for end in range(16, len(h) + 1, 16):",
                "        g = sum(h[end - 16 + j] * P[j] for j in range(16)) & M",
                "        w = step(w, g)",
                "        if end % stride == 0 and len(keys) < 24:",
                "            keys.append(w)",
                "    print(' '.join(str(x) for x in [stride] + keys))");
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", script).redirectErrorStream(true).start();
        py.getOutputStream().write(input.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        py.getOutputStream().close();
        String out = new String(py.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(py.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(py.exitValue()).as(out).isZero();
        assertThat(out.lines().toList()).isEqualTo(expected);
    }

    @Test
    void aSampleHoldsAtMostMaxKeysWhateverThePromptsLength() {
        for (int blocks : new int[] {15, 16, 17, 768, 769, 5_000, 16_384, 40_000}) {
            int stride = SampledChain.stride(blocks);
            long[] keys = SampledChain.sample(prompt(1, blocks), blocks, stride);
            int n = keys == null ? 0 : keys.length;
            assertThat(n).as("%d blocks", blocks).isLessThanOrEqualTo(SampledChain.MAX_KEYS)
                    .isEqualTo(Math.min(blocks / stride, SampledChain.MAX_KEYS));
            assertThat(stride % SampledChain.MIN_STRIDE).isZero();
        }
    }
}
