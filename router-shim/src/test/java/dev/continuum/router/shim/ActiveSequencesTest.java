package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.snapshot;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.SampleKey;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Active sequences with an injected clock: what counts on a rank from dispatch to first token and to the end. */
class ActiveSequencesTest {
    private static final String NS = "dynamo";
    /** Seven blocks of {@link ShimFleets#BLOCK} tokens. */
    private static final long EST = 100;

    private final ScriptedLoad load = new ScriptedLoad();
    private final LoadBasedPicker picker = new LoadBasedPicker(load, load,
            new SelectionMetrics(new SimpleMeterRegistry()));
    private final ActiveSequences seqs = picker.sequences();

    private static SampleKey key(long instance) {
        return new SampleKey(new WorkerId(NS, instance), 0);
    }

    private Selection pick(DynamoSnapshot s) {
        return picker.pick(s, new PickRequest(MODEL, Set.of(NS), EST));
    }

    @Test
    void anAggregatedDispatchCountsItsPromptUntilTheFirstTokenAndItsBlocksUntilTheEnd() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED));
        Selection sel = pick(s);
        assertThat(seqs.activePrefillTokens(key(1))).isEqualTo(EST);
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);
        assertThat(seqs.activeSequences(key(1))).isEqualTo(1);

        sel.dispatch().firstToken();
        assertThat(seqs.activePrefillTokens(key(1))).isZero();
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);
        sel.dispatch().firstToken(); // idempotent
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);

        sel.dispatch().ended(SequenceEnd.COMPLETED);
        assertThat(seqs.activeBlocks(key(1))).isZero();
        assertThat(seqs.activeSequences(key(1))).isZero();
        sel.dispatch().ended(SequenceEnd.COMPLETED);
        assertThat(seqs.totals()).isEqualTo(new ActiveSequences.Totals(0, 0, 0));
    }

    @Test
    void aPairsPrefillRankHoldsTheRequestUntilTheFirstTokenAndItsDecodeRankUntilTheEnd() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL));
        Selection sel = pick(s);
        assertThat(seqs.activePrefillTokens(key(2))).isEqualTo(EST);
        assertThat(seqs.activeBlocks(key(2))).isEqualTo(7);
        assertThat(seqs.activePrefillTokens(key(1))).isZero();
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);

        sel.dispatch().firstToken();
        assertThat(seqs.activePrefillTokens(key(2))).isZero();
        assertThat(seqs.activeBlocks(key(2))).isZero();
        assertThat(seqs.activeSequences(key(2))).isZero();
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);

        sel.dispatch().ended(SequenceEnd.COMPLETED);
        assertThat(seqs.activeBlocks(key(1))).isZero();
    }

    @Test
    void aClientLeavingBeforeTheFirstTokenReleasesEverything() {
        DynamoSnapshot s = snapshot(worker(NS, 1, DECODE), worker(NS, 2, PREFILL));
        Selection sel = pick(s);
        sel.dispatch().ended(SequenceEnd.CANCELLED);
        assertThat(seqs.totals()).isEqualTo(new ActiveSequences.Totals(0, 0, 0));
        sel.dispatch().firstToken(); // after the end: nothing
        assertThat(seqs.totals()).isEqualTo(new ActiveSequences.Totals(0, 0, 0));
    }

    /** The sequence of upstream's own unit test (lib/kv-router/src/sequence.rs), block size 4. */
    @Test
    void sharedPrefixesOnOneRankCountOnceAsUpstreamCountsThem() {
        RankSequences rank = seqs.rank(key(1), new RankLedger());
        Sequence r1 = start(rank, 3, new long[] {1, 2, 3}, 12);
        seqs.drain(load.getAsLong(), false);
        assertThat(rank.blocks()).isEqualTo(3);
        assertThat(rank.prefillTokens()).isEqualTo(12);
        Sequence r2 = start(rank, 1, new long[] {4}, 4);
        seqs.drain(load.getAsLong(), false);
        assertThat(rank.blocks()).isEqualTo(4);
        assertThat(rank.prefillTokens()).isEqualTo(16);
        // Before the drainer admits it, a hashed sequence counts every block (an upper bound) but those it shares
        // with a prompt still prefilling on the rank: r1 (12 tokens, no first token yet) counts blocks 1 to 3.
        Sequence r3 = start(rank, 4, new long[] {1, 2, 3, 4}, 0);
        assertThat(rank.blocks()).isEqualTo(4 + 1);
        seqs.drain(load.getAsLong(), false);
        assertThat(rank.blocks()).isEqualTo(4);
        assertThat(rank.prefillTokens()).isEqualTo(16);

        end(r2);
        assertThat(rank.blocks()).isEqualTo(4);
        assertThat(rank.prefillTokens()).isEqualTo(12);
        end(r3);
        assertThat(rank.blocks()).isEqualTo(3);
        end(r1);
        assertThat(rank.blocks()).isZero();
        assertThat(rank.prefillTokens()).isZero();
        assertThat(rank.refs.size()).isZero();
    }

    @Test
    void aTrailingPartialBlockCountsOnItsOwn() {
        RankSequences rank = seqs.rank(key(1), new RankLedger());
        Sequence a = start(rank, 3, new long[] {7, 8}, 40);
        Sequence b = start(rank, 3, new long[] {7, 8}, 40);
        seqs.drain(load.getAsLong(), false);
        assertThat(rank.blocks()).isEqualTo(2 + 1 + 1);
        end(a);
        assertThat(rank.blocks()).isEqualTo(3);
        end(b);
        assertThat(rank.blocks()).isZero();
    }

    /** Starts a sequence on one aggregated rank by hand, as a KV pick does: {@code blocks} with block hashes. */
    private Sequence start(RankSequences rank, long blocks, long[] hashes, long uncached) {
        Sequence s = seqs.take();
        assertThat(s).isNotNull();
        s.decode = rank;
        s.prefill = null;
        s.decodeLedger = null;
        s.prefillLedger = null;
        s.decodeTicket = RankLedger.NO_COUNTER;
        s.prefillTicket = RankLedger.NO_COUNTER;
        s.decodeBlocks = blocks;
        s.prefillBlocks = 0;
        s.decodeHashes = new BlockHashes(4, hashes);
        s.prefillHashes = null;
        s.prefillTokens = uncached;
        seqs.start(s, load.getAsLong());
        return s;
    }

    private void end(Sequence s) {
        int stamp = Sequence.stamp(s.state());
        assertThat(seqs.end(s, stamp, SequenceEnd.COMPLETED, load.getAsLong())).isTrue();
        seqs.drain(load.getAsLong(), false);
    }

    @Test
    void aSampleAnswersTheLedgerButNotTheActiveSequences() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        load.sample(new WorkerId(NS, 1), 0, 0L, null);
        load.sample(new WorkerId(NS, 2), 0, 0L, null);
        Selection first = pick(s);
        assertThat(first.decode().worker().instanceId()).isEqualTo(1);
        // Fresh samples that do not show the request yet (it is still queued on the worker).
        load.advance(Duration.ofMillis(5));
        load.sample(new WorkerId(NS, 1), 0, 0L, null);
        load.sample(new WorkerId(NS, 2), 0, 0L, null);
        // Worker 1 still counts its active sequence: max(sample 0 + unanswered 0, active 7 blocks).
        Selection second = pick(s);
        assertThat(second.decode().worker().instanceId()).isEqualTo(2);
        first.dispatch().ended();
        second.dispatch().ended();
        // A sample larger than the active sequences wins: worker 2 reports 50 blocks of other routers' requests.
        load.advance(Duration.ofMillis(5));
        load.sample(new WorkerId(NS, 2), 0, 50L, null);
        Selection a = pick(s);
        assertThat(a.decode().worker().instanceId()).isEqualTo(1);
        Selection b = pick(s);
        assertThat(b.decode().worker().instanceId()).isEqualTo(1);
    }

    @Test
    void aSequenceOlderThanItsLifetimeIsExpiredCountedAndToldOnce() {
        AtomicLong clock = new AtomicLong();
        ActiveSequences own = new ActiveSequences(clock::get, Duration.ofSeconds(300));
        List<String> told = new ArrayList<>();
        own.listen(new SequenceListener() {
            @Override
            public void dispatched(DispatchedSequence d) {
                told.add("dispatched " + d.id() + " " + d.decode().worker().instanceId() + " " + d.prefillTokens());
            }

            @Override
            public void firstToken(long id) {
                told.add("first " + id);
            }

            @Override
            public void ended(long id, SequenceEnd reason) {
                told.add("ended " + id + " " + reason.label());
            }
        });
        RankSequences rank = own.rank(key(1), new RankLedger());
        Sequence s = own.take();
        s.decode = rank;
        s.decodeBlocks = 5;
        s.prefillTokens = 70;
        int stamp = own.start(s, clock.get());
        TrackedDispatch handle = new TrackedDispatch(s, stamp);
        own.drain(clock.get(), false);
        handle.firstToken();
        clock.addAndGet(Duration.ofSeconds(299).toNanos());
        own.drain(clock.get(), false);
        assertThat(rank.blocks()).isEqualTo(5);
        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        own.drain(clock.get(), false);
        assertThat(rank.blocks()).isZero();
        assertThat(own.expired(SequenceEnd.EXPIRED)).isEqualTo(1);
        // The request's own end comes later and finds nothing to do (the object may be serving another already).
        handle.ended(SequenceEnd.COMPLETED);
        own.drain(clock.get(), false);
        assertThat(rank.blocks()).isZero();
        assertThat(told).containsExactly("dispatched 1 1 70", "first 1", "ended 1 lifetime");
    }

    @Test
    void aFloodThatNeverAnswersIsBoundedExpiredAndCounted() {
        AtomicLong clock = new AtomicLong();
        ActiveSequences own = new ActiveSequences(clock::get, Duration.ofSeconds(300));
        RankSequences rank = own.rank(key(1), new RankLedger());
        int extra = 10;
        for (int i = 0; i < ActiveSequences.MAX_SEQUENCES + extra; i++) {
            Sequence s = own.take();
            if (s == null) {
                continue;
            }
            s.decode = rank;
            s.decodeBlocks = 1;
            s.prefillTokens = 16;
            own.start(s, clock.get());
        }
        assertThat(own.untracked()).isEqualTo(extra);
        assertThat(rank.sequences()).isEqualTo(ActiveSequences.MAX_SEQUENCES);
        clock.addAndGet(Duration.ofSeconds(301).toNanos());
        own.drain(clock.get(), false);
        assertThat(own.expired(SequenceEnd.EXPIRED)).isEqualTo(ActiveSequences.MAX_SEQUENCES);
        assertThat(own.totals()).isEqualTo(new ActiveSequences.Totals(0, 0, 0));
        assertThat(own.liveSequences()).isZero();
        // Expired objects went back to the pool: the next dispatches are tracked again.
        own.drain(clock.get(), false);
        assertThat(own.take()).isNotNull();
    }

    @Test
    void aWorkerThatLeavesTakesItsSequencesWithIt() {
        DynamoSnapshot before = snapshot(worker(NS, 1, AGGREGATED), worker(NS, 2, AGGREGATED));
        load.sample(new WorkerId(NS, 2), 0, 500L, null);
        Selection sel = pick(before);
        assertThat(sel.decode().worker().instanceId()).isEqualTo(1);
        assertThat(seqs.activeBlocks(key(1))).isEqualTo(7);
        picker.prepare(snapshot(worker(NS, 2, AGGREGATED)));
        picker.sweepLedger();
        assertThat(seqs.activeBlocks(key(1))).isZero();
        assertThat(seqs.expired(SequenceEnd.WORKER_LEFT)).isEqualTo(1);
        sel.dispatch().ended(SequenceEnd.FAILED);
        assertThat(seqs.totals().blocks()).isZero();
        picker.sweepLedger();
        assertThat(seqs.rankCount()).isEqualTo(1);
    }

    @Test
    void aMovedRequestStopsCountingWhereItWas() {
        DynamoSnapshot s = snapshot(worker(NS, 1, AGGREGATED));
        Selection sel = pick(s);
        new PlanEnding(sel.dispatch(), RoutingPath.UNIFIED,
                new DisaggregatedMetrics(new SimpleMeterRegistry())).ended(
                        dev.continuum.router.proxy.DispatchPlan.Outcome.RESENT);
        assertThat(seqs.activeBlocks(key(1))).isZero();
        assertThat(PlanEnding.reason(dev.continuum.router.proxy.DispatchPlan.Outcome.FELL_BACK))
                .isEqualTo(SequenceEnd.MOVED);
        assertThat(PlanEnding.reason(dev.continuum.router.proxy.DispatchPlan.Outcome.ABANDONED))
                .isEqualTo(SequenceEnd.CANCELLED);
    }
}
