package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Readers racing the writer only ever see states between write sections: the writer stores a chain for a rank
 * and takes it away again (while another rank churns), and every answer a reader gets must show the rank at a
 * section boundary, never a rank that was not admitted. A chain of one section (64 blocks) stored in one event
 * and cleared in the next is seen whole or not at all; a longer one grows by whole sections and, removed with
 * its worker, leaves in one step.
 */
class RadixIndexConcurrencyTest {
    private static final int SECTION = RadixIndex.WRITE_SECTION_BLOCKS;

    @Test
    void readersSeeEitherTheWholeChainOrNone() throws Exception {
        race(SECTION, Set.of(0, SECTION), false);
    }

    @Test
    void aLongChainIsSeenGrowingByWholeSectionsAndLeavesWithItsWorkerInOneStep() throws Exception {
        int depth = 3 * SECTION + 7;
        race(depth, Set.of(0, SECTION, 2 * SECTION, 3 * SECTION, depth), true);
    }

    /**
     * Rounds of: store a {@code depth}-block chain for the watched rank, churn the noise rank, then take the chain
     * away ({@code departs}: the worker leaves with {@link RadixIndex#removeRanks}, else {@link RadixIndex#clearRank}).
     * Readers check every answer's depth is in {@code allowed}.
     */
    private static void race(int depth, Set<Integer> allowed, boolean departs) throws Exception {
        RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
        long[] tokens = new long[depth];
        long[] engine = new long[depth];
        for (int i = 0; i < depth; i++) {
            tokens[i] = 7_000 + i;
            engine[i] = 9_000 + i;
        }
        int[] watched = {index.addRank(42, 3)};
        int noise = index.addRank(43, 0);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> violation = new AtomicReference<>();
        AtomicLong answered = new AtomicLong();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            Thread reader = new Thread(() -> {
                OverlapScores out = new OverlapScores(8);
                BlockHashes request = new BlockHashes(16, tokens);
                while (!stop.get()) {
                    index.findMatches(request, out);
                    int seen = out.matchedBlocksOf(42, 3);
                    if (!allowed.contains(seen)) {
                        violation.set("a chain seen between sections: " + seen);
                    }
                    for (int i = 0; i < out.size(); i++) {
                        if (out.workerId(i) != 42 && out.workerId(i) != 43) {
                            violation.set("unknown worker " + out.workerId(i));
                        }
                    }
                    answered.incrementAndGet();
                }
            });
            reader.start();
            readers.add(reader);
        }
        long[] noiseEngine = new long[SECTION / 2];
        for (int round = 0; round < 20_000; round++) {
            index.store(watched[0], false, 0, engine, tokens, 0, depth);
            for (int i = 0; i < noiseEngine.length; i++) {
                noiseEngine[i] = round * 1_000L + i;
            }
            index.store(noise, false, 0, noiseEngine, tokens, 0, noiseEngine.length);
            if (departs) {
                index.removeRanks(watched, 1);
                watched[0] = index.addRank(42, 3);
            } else {
                index.clearRank(watched[0]);
            }
            index.remove(noise, noiseEngine, 0, noiseEngine.length);
        }
        stop.set(true);
        for (Thread reader : readers) {
            reader.join();
        }
        assertThat(violation.get()).isNull();
        assertThat(answered.get()).isPositive();
        assertThat(index.nodes()).isZero();
    }
}
