package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Readers racing the writer only ever see whole events: the writer stores a 64-block chain for a rank in one
 * event and clears it in the next (while other ranks churn), so every answer a reader gets must show the
 * rank at depth 0 or 64, never in between, and never a rank that was not admitted.
 */
class RadixIndexConcurrencyTest {
    private static final int DEPTH = 64;

    @Test
    void readersSeeEitherTheWholeChainOrNone() throws Exception {
        RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
        long[] tokens = new long[DEPTH];
        long[] engine = new long[DEPTH];
        for (int i = 0; i < DEPTH; i++) {
            tokens[i] = 7_000 + i;
            engine[i] = 9_000 + i;
        }
        int watched = index.addRank(42, 3);
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
                    int depth = out.matchedBlocksOf(42, 3);
                    if (depth != 0 && depth != DEPTH) {
                        violation.set("partial chain seen: " + depth);
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
        long[] noiseEngine = new long[DEPTH / 2];
        for (int round = 0; round < 20_000; round++) {
            index.store(watched, false, 0, engine, tokens, 0, DEPTH);
            for (int i = 0; i < noiseEngine.length; i++) {
                noiseEngine[i] = round * 1_000L + i;
            }
            index.store(noise, false, 0, noiseEngine, tokens, 0, noiseEngine.length);
            index.clearRank(watched);
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
