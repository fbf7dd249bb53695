package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.SampleKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The unanswered-dispatch ledger: exact sums per sample window, bounded buckets, stall and age rules. */
class DispatchLedgerTest {
    private static final SampleKey KEY = new SampleKey(new WorkerId("dynamo", 7), 0);
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long T0 = 1_000_000 * MS;

    private final DispatchLedger ledger = new DispatchLedger(T0);

    private DispatchLedger.Entry dispatch(long at, long lastSample, long blocks, boolean eligible) {
        DispatchLedger.Entry e = new DispatchLedger.Entry(blocks * 16, blocks, at, eligible);
        ledger.add(KEY, e, lastSample, at);
        return e;
    }

    @Test
    void aBurstBetweenTwoSamplesIsSummedExactlyInAFewBuckets() {
        long sample = T0 - MS;
        // 10,000 dispatches within 200 ms (50,000 per second), no sample in between.
        for (int i = 0; i < 10_000; i++) {
            dispatch(T0 + i * 20_000L, sample, 1, true);
        }
        long now = T0 + 200 * MS;
        DispatchLedger.Pending p = ledger.pending(KEY, sample, now);
        assertThat(p.blocks()).isEqualTo(10_000);
        assertThat(p.tokens()).isEqualTo(160_000);
        assertThat(p.stalled()).isFalse();
        assertThat(ledger.buckets(KEY)).isLessThanOrEqualTo(11);

        // A sample received after the last dispatch answers all of them.
        assertThat(ledger.pending(KEY, now + MS, now + 2 * MS)).isEqualTo(DispatchLedger.Pending.NONE);
    }

    @Test
    void aSampleBetweenDispatchesAnswersOnlyTheEarlierOnes() {
        dispatch(T0, DispatchLedger.NO_SAMPLE, 3, true);
        dispatch(T0 + MS, DispatchLedger.NO_SAMPLE, 3, true);
        long sample = T0 + 2 * MS;
        // Within the same 20 ms, but a sample arrived: a new bucket, so the sample answers only the first two.
        dispatch(T0 + 3 * MS, sample, 5, true);

        assertThat(ledger.pending(KEY, sample, T0 + 4 * MS).blocks()).isEqualTo(5);
        // The answered bucket was dropped when the new one was added.
        assertThat(ledger.buckets(KEY)).isEqualTo(1);
    }

    @Test
    void anOpenEligibleRequestUnansweredForFiveSecondsIsAStallUntilItEnds() {
        DispatchLedger.Entry small = dispatch(T0, DispatchLedger.NO_SAMPLE, 1, true);
        DispatchLedger.Entry decodeOfAPair = dispatch(T0 + MS, DispatchLedger.NO_SAMPLE, 4, false);
        long later = T0 + TimeUnit.SECONDS.toNanos(6);
        // Neither a one-block request nor the decode side of a pair can make a stall.
        assertThat(ledger.pending(KEY, later).stalled()).isFalse();

        DispatchLedger.Entry big = dispatch(T0 + 2 * MS, DispatchLedger.NO_SAMPLE, 2, true);
        assertThat(ledger.pending(KEY, T0 + TimeUnit.SECONDS.toNanos(4)).stalled()).isFalse();
        assertThat(ledger.pending(KEY, later).stalled()).isTrue();

        // Ending the request stops the stall; its backlog stays until a sample or 30 s.
        big.end();
        big.end(); // twice is once
        DispatchLedger.Pending p = ledger.pending(KEY, later);
        assertThat(p.stalled()).isFalse();
        assertThat(p.blocks()).isEqualTo(7);
        small.end();
        decodeOfAPair.end();
    }

    @Test
    void dispatchesAgeOutAfterThirtySecondsAndTheSweepDropsTheKey() {
        dispatch(T0, DispatchLedger.NO_SAMPLE, 2, true);
        assertThat(ledger.pending(KEY, T0 + TimeUnit.SECONDS.toNanos(29)).blocks()).isEqualTo(2);
        long later = T0 + TimeUnit.SECONDS.toNanos(31);
        assertThat(ledger.pending(KEY, later)).isEqualTo(DispatchLedger.Pending.NONE);

        SampleKey other = new SampleKey(new WorkerId("dynamo", 8), 0);
        ledger.add(other, new DispatchLedger.Entry(16, 1, later, true), DispatchLedger.NO_SAMPLE, later);
        assertThat(ledger.keys()).isEqualTo(1);
    }

    @Test
    void concurrentDispatchesAndEndsKeepExactCounts() throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<DispatchLedger.Entry> all = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                for (int i = 0; i < 2_000; i++) {
                    DispatchLedger.Entry e = new DispatchLedger.Entry(32, 2, T0 + i * 1_000L, true);
                    ledger.add(KEY, e, DispatchLedger.NO_SAMPLE, T0 + i * 1_000L);
                    all.add(e);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        long later = T0 + TimeUnit.SECONDS.toNanos(6);
        DispatchLedger.Pending p = ledger.pending(KEY, later);
        assertThat(p.blocks()).isEqualTo(16_000);
        assertThat(p.stalled()).isTrue();
        all.forEach(DispatchLedger.Entry::end);
        assertThat(ledger.pending(KEY, later).stalled()).isFalse();
    }
}
