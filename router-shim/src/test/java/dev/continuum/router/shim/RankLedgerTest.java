package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The rank ledger's ring of reusable slots: exact sums and open counts while writers on several threads open,
 * join and recycle slots at once, wide buckets for a rank that stays silent, and stale tickets.
 */
class RankLedgerTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long T0 = 1_000_000 * MS;
    private static final int THREADS = 4;
    private static final int EPOCHS = 120;
    private static final int PER_THREAD = 150;

    private final RankLedger rank = new RankLedger();

    private static long base(int epoch) {
        return T0 + epoch * SECOND;
    }

    /** What thread {@code t} records as its {@code k}-th dispatch of {@code epoch}: distinct, known sizes. */
    private static long tokens(int epoch, int t, int k) {
        return 1 + (t * 7L + k * 13L + epoch) % 50;
    }

    private static long blocks(int epoch, int t, int k) {
        return 1 + (t + k + epoch) % 4; // 1 to 4: some cannot mark a stall
    }

    /**
     * Epoch after epoch, four threads record 150 dispatches each over 150 ms (so several buckets open per
     * epoch, and the 16 slots are recycled many times over while other threads write). Each epoch's sample,
     * received before its first dispatch, answers every earlier one; after each epoch the ledger must hold
     * exactly that epoch's tokens, blocks and open requests, and ending the previous epoch's requests (whose
     * slots were recycled) must not touch the new buckets.
     */
    @Test
    void concurrentWritersRecyclingSlotsNeitherLoseNorDoubleCountADispatch() throws Exception {
        CyclicBarrier go = new CyclicBarrier(THREADS + 1);
        CyclicBarrier done = new CyclicBarrier(THREADS + 1);
        List<List<Selection.Dispatch>> records = new ArrayList<>();
        for (int e = 0; e < EPOCHS; e++) {
            records.add(new CopyOnWriteArrayList<>());
        }
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            Thread th = new Thread(() -> {
                try {
                    for (int e = 0; e < EPOCHS; e++) {
                        go.await(30, TimeUnit.SECONDS);
                        long sample = base(e) - 1;
                        for (int k = 0; k < PER_THREAD; k++) {
                            long at = base(e) + k * MS + thread * 100L;
                            long ticket = rank.add(tokens(e, thread, k), blocks(e, thread, k), true, sample, at);
                            records.get(e).add(PickDispatch.of(rank, ticket, null, RankLedger.NO_COUNTER));
                        }
                        done.await(30, TimeUnit.SECONDS);
                    }
                } catch (Exception | AssertionError ex) {
                    failures.add(ex);
                }
            }, "ledger-writer-" + t);
            threads.add(th);
            th.start();
        }
        for (int e = 0; e < EPOCHS; e++) {
            go.await(30, TimeUnit.SECONDS);
            done.await(30, TimeUnit.SECONDS);
            long sample = base(e) - 1;
            long now = base(e) + 200 * MS;
            long expectedTokens = 0;
            long expectedBlocks = 0;
            for (int t = 0; t < THREADS; t++) {
                for (int k = 0; k < PER_THREAD; k++) {
                    expectedTokens += tokens(e, t, k);
                    expectedBlocks += blocks(e, t, k);
                }
            }
            long tickets = records.get(e).stream().filter(d -> d != Selection.Dispatch.NONE).count();
            assertThat(rank.pendingTokens(sample, now)).as("tokens of epoch %d", e).isEqualTo(expectedTokens);
            assertThat(rank.pendingBlocks(sample, now)).as("blocks of epoch %d", e).isEqualTo(expectedBlocks);
            assertThat(rank.openRequests(sample, now)).as("open requests of epoch %d", e).isEqualTo((int) tickets);
            // The slots of the previous epochs were recycled: ending their requests leaves these counts alone.
            if (e > 0) {
                records.get(e - 1).forEach(Selection.Dispatch::ended);
                assertThat(rank.openRequests(sample, now)).isEqualTo((int) tickets);
            }
            // The next epoch's sample answers all of it.
            assertThat(rank.pendingTokens(base(e + 1) - 1, now)).isZero();
        }
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertThat(failures).isEmpty();

        int last = EPOCHS - 1;
        long sample = base(last) - 1;
        long later = base(last) + 6 * SECOND;
        assertThat(rank.stalled(sample, later)).isTrue();
        records.get(last).forEach(Selection.Dispatch::ended);
        records.get(last).forEach(Selection.Dispatch::ended); // twice is once
        assertThat(rank.openRequests(sample, later)).isZero();
        assertThat(rank.stalled(sample, later)).isFalse();
    }

    /**
     * A rank that takes a dispatch every 10 ms for 40 s without one sample: the ring opens wide buckets once
     * half of it is live, so every dispatch of the last 30 s still counts, exactly, and older ones age out.
     */
    @Test
    void aSilentRankKeepsThirtySecondsOfDispatchesInWideBuckets() {
        long step = 10 * MS;
        int n = 4_000; // 40 s
        for (int i = 0; i < n; i++) {
            rank.add(3, 1, true, DispatchLedger.NO_SAMPLE, T0 + i * step);
        }
        long now = T0 + (n - 1) * step;
        long pending = rank.pendingBlocks(DispatchLedger.NO_SAMPLE, now);
        // 3,000 dispatches fall in the last 30 s; a wide bucket may keep up to one span more.
        long spanOfDispatches = RankLedger.WIDE_SPAN_NANOS / step;
        assertThat(pending).isBetween(3_000L, 3_000L + spanOfDispatches);
        assertThat(rank.pendingTokens(DispatchLedger.NO_SAMPLE, now)).isEqualTo(3 * pending);
        assertThat(rank.bucketCount()).isLessThanOrEqualTo(RankLedger.SLOTS);
        // One sample after the last dispatch answers everything.
        assertThat(rank.pendingBlocks(now + 1, now + 2)).isZero();
    }

    @Test
    void onlyTheFirstSpanOfAWideBucketCanMarkAStall() {
        long sample = DispatchLedger.NO_SAMPLE;
        // Eight live 20 ms buckets make the ninth wide.
        for (int i = 0; i < 8; i++) {
            rank.add(32, 2, false, sample, T0 + i * 30 * MS);
        }
        long wideOpened = T0 + 8 * 30 * MS;
        long first = rank.add(32, 2, true, sample, wideOpened);
        long early = rank.add(32, 2, true, sample, wideOpened + 10 * MS);
        long late = rank.add(32, 2, true, sample, wideOpened + SECOND);
        assertThat(first).isNotEqualTo(RankLedger.NO_COUNTER);
        assertThat(early).isEqualTo(first);
        assertThat(late).isEqualTo(RankLedger.NO_COUNTER);
        assertThat(rank.bucketCount()).isEqualTo(9);

        long at = wideOpened + 6 * SECOND;
        assertThat(rank.stalled(sample, at)).isTrue();
        rank.end(first);
        assertThat(rank.stalled(sample, at)).isTrue();
        rank.end(early);
        assertThat(rank.stalled(sample, at)).isFalse();
        assertThat(rank.pendingBlocks(sample, at)).isEqualTo(22);
    }

    @Test
    void aTicketOfARecycledSlotEndsNothing() {
        long old = rank.add(32, 2, true, DispatchLedger.NO_SAMPLE, T0);
        // Sixteen more buckets, each answered by the next one's sample: bucket 0's slot now holds bucket 16.
        long ticket = old;
        for (int i = 1; i <= RankLedger.SLOTS; i++) {
            long at = T0 + i * 30 * MS;
            ticket = rank.add(32, 2, true, at - 1, at);
        }
        assertThat(ticket & (RankLedger.SLOTS - 1)).isEqualTo(old & (RankLedger.SLOTS - 1));
        long now = T0 + 6 * SECOND + RankLedger.SLOTS * 30 * MS;
        long sample = T0 + RankLedger.SLOTS * 30 * MS - 1;
        assertThat(rank.openRequests(sample, now)).isEqualTo(1);
        rank.end(old);
        assertThat(rank.openRequests(sample, now)).isEqualTo(1);
        assertThat(rank.stalled(sample, now)).isTrue();
        rank.end(ticket);
        assertThat(rank.stalled(sample, now)).isFalse();
    }
}
