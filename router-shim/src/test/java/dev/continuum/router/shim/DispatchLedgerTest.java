package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.SampleKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The unanswered-dispatch ledger: exact sums per sample window, bounded buckets, stall and age rules, sweep. */
class DispatchLedgerTest {
    private static final SampleKey KEY = new SampleKey(new WorkerId("dynamo", 7), 0);
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long T0 = 1_000_000 * MS;

    private final DispatchLedger ledger = new DispatchLedger();
    private final RankLedger rank = ledger.rank(KEY);

    private long dispatch(long at, long lastSample, long blocks, boolean eligible) {
        return rank.add(blocks * 16, blocks, eligible, lastSample, at);
    }

    @Test
    void aBurstBetweenTwoSamplesIsSummedExactlyInAFewBuckets() {
        long sample = T0 - MS;
        // 10,000 dispatches within 200 ms (50,000 per second), no sample in between.
        for (int i = 0; i < 10_000; i++) {
            dispatch(T0 + i * 20_000L, sample, 1, true);
        }
        long now = T0 + 200 * MS;
        assertThat(rank.pendingBlocks(sample, now)).isEqualTo(10_000);
        assertThat(rank.pendingTokens(sample, now)).isEqualTo(160_000);
        assertThat(rank.stalled(sample, now)).isFalse();
        assertThat(rank.bucketCount()).isLessThanOrEqualTo(11);

        // A sample received after the last dispatch answers all of them.
        assertThat(rank.pendingBlocks(now + MS, now + 2 * MS)).isZero();
        assertThat(rank.pendingTokens(now + MS, now + 2 * MS)).isZero();
    }

    @Test
    void aSampleBetweenDispatchesAnswersOnlyTheEarlierOnes() {
        dispatch(T0, DispatchLedger.NO_SAMPLE, 3, true);
        dispatch(T0 + MS, DispatchLedger.NO_SAMPLE, 3, true);
        long sample = T0 + 2 * MS;
        // Within the same 20 ms, but a sample arrived: a new bucket, so the sample answers only the first two.
        dispatch(T0 + 3 * MS, sample, 5, true);

        assertThat(rank.pendingBlocks(sample, T0 + 4 * MS)).isEqualTo(5);
        // The answered bucket was dropped when the new one was added.
        assertThat(rank.bucketCount()).isEqualTo(1);
    }

    @Test
    void anOpenEligibleRequestUnansweredForFiveSecondsIsAStallUntilItEnds() {
        long small = dispatch(T0, DispatchLedger.NO_SAMPLE, 1, true);
        long decodeOfAPair = dispatch(T0 + MS, DispatchLedger.NO_SAMPLE, 4, false);
        long later = T0 + TimeUnit.SECONDS.toNanos(6);
        // Neither a one-block request nor the decode side of a pair can make a stall.
        assertThat(small).isEqualTo(RankLedger.NO_COUNTER);
        assertThat(decodeOfAPair).isEqualTo(RankLedger.NO_COUNTER);
        assertThat(PickDispatch.of(rank, small, rank, decodeOfAPair)).isSameAs(Selection.Dispatch.NONE);
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isFalse();

        Selection.Dispatch big = PickDispatch.of(rank, dispatch(T0 + 2 * MS, DispatchLedger.NO_SAMPLE, 2, true), null,
                RankLedger.NO_COUNTER);
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, T0 + TimeUnit.SECONDS.toNanos(4))).isFalse();
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isTrue();

        // Ending the request stops the stall; its backlog stays until a sample or 30 s.
        big.ended();
        big.ended(); // twice is once
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isFalse();
        assertThat(rank.pendingBlocks(DispatchLedger.NO_SAMPLE, later)).isEqualTo(7);
    }

    @Test
    void dispatchesAgeOutAfterThirtySeconds() {
        dispatch(T0, DispatchLedger.NO_SAMPLE, 2, true);
        assertThat(rank.pendingBlocks(DispatchLedger.NO_SAMPLE, T0 + TimeUnit.SECONDS.toNanos(29))).isEqualTo(2);
        long later = T0 + TimeUnit.SECONDS.toNanos(31);
        assertThat(rank.pendingBlocks(DispatchLedger.NO_SAMPLE, later)).isZero();
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isFalse();
    }

    @Test
    void theSweepTrimsAgedBucketsAndForgetsOnlyRanksOutsideTheIndex() {
        SampleKey departed = new SampleKey(new WorkerId("dynamo", 8), 0);
        ledger.indexed(Set.of(KEY));
        dispatch(T0, DispatchLedger.NO_SAMPLE, 2, true);
        ledger.rank(departed).add(32, 2, true, DispatchLedger.NO_SAMPLE, T0);
        assertThat(ledger.keys()).isEqualTo(2);

        ledger.sweep(T0 + TimeUnit.SECONDS.toNanos(29));
        assertThat(ledger.ledgers()).isEqualTo(2); // both still count

        ledger.sweep(T0 + TimeUnit.SECONDS.toNanos(31));
        assertThat(ledger.keys()).isZero();
        // The indexed rank keeps its (empty) ledger, so the index's reference stays the one in use.
        assertThat(ledger.ledgers()).isEqualTo(1);
        assertThat(ledger.rank(KEY)).isSameAs(rank);
        assertThat(ledger.rank(departed)).isNotNull();
    }

    @Test
    void sumsSaturateInsteadOfWrapping() {
        rank.add(Long.MAX_VALUE - 1, Long.MAX_VALUE - 1, false, DispatchLedger.NO_SAMPLE, T0);
        rank.add(Long.MAX_VALUE - 1, Long.MAX_VALUE - 1, false, DispatchLedger.NO_SAMPLE, T0 + MS);
        rank.add(5, 5, false, DispatchLedger.NO_SAMPLE, T0 + 30 * MS); // a second bucket
        assertThat(rank.pendingBlocks(DispatchLedger.NO_SAMPLE, T0 + 40 * MS)).isEqualTo(Long.MAX_VALUE);
        assertThat(rank.pendingTokens(DispatchLedger.NO_SAMPLE, T0 + 40 * MS)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void concurrentDispatchesAndEndsKeepExactCounts() throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<Selection.Dispatch> all = java.util.Collections.synchronizedList(new ArrayList<>());
        CyclicBarrier go = new CyclicBarrier(4);
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < 2_000; i++) {
                    all.add(PickDispatch.of(rank, rank.add(32, 2, true, DispatchLedger.NO_SAMPLE, T0 + i * 1_000L), null,
                            RankLedger.NO_COUNTER));
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        long later = T0 + TimeUnit.SECONDS.toNanos(6);
        assertThat(rank.pendingBlocks(DispatchLedger.NO_SAMPLE, later)).isEqualTo(16_000);
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isTrue();
        all.forEach(Selection.Dispatch::ended);
        assertThat(rank.stalled(DispatchLedger.NO_SAMPLE, later)).isFalse();
    }
}
