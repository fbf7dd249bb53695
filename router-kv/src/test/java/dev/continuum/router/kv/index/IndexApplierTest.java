package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.events.KvWire;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The writer's rules, driven synchronously: identity gate, cursors, sources, tiers, and a hostile publisher. */
class IndexApplierTest {
    private static final String NS = "dynamo";
    private static final PublisherId P = new PublisherId(NS, 0xAAAAL);
    private static final PublisherId Q = new PublisherId(NS, 0xBBBBL);
    private static final long[] T = {101, 102, 103, 104};

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
    private KvIndexMetrics metrics = new KvIndexMetrics(registry, index);
    private IndexApplier applier = new IndexApplier(index, metrics);
    private final OverlapScores out = new OverlapScores(64);

    private void use(IndexLimits limits) {
        registry.clear();
        index = new RadixIndex(limits);
        metrics = new KvIndexMetrics(registry, index);
        applier = new IndexApplier(index, metrics);
    }

    private static long[] engine(long base, int n) {
        long[] h = new long[n];
        for (int i = 0; i < n; i++) {
            h[i] = base + i;
        }
        return h;
    }

    private double count(KvEventResult r) {
        return metrics.total(r);
    }

    private int depth(long worker, int dp) {
        index.findMatches(new BlockHashes(16, T), out);
        return out.matchedBlocksOf(worker, dp);
    }

    private void store(PublisherId p, long worker, long id, int dp, int blocks) {
        applier.applyPayload(p, KvWire.stored(worker, id, dp, null, engine(worker * 1000 + dp * 100, blocks), T));
    }

    @Test
    void onlyLiveWorkersAndTheRanksTheirCardsDeclareAreAdmitted() {
        applier.applyFleet(Map.of(new WorkerId(NS, 1), new DpRanks(2, 2)), 1);
        store(P, 1, 0, 2, 4);
        store(P, 1, 0, 3, 2);
        store(P, 1, 0, 0, 4); // below the declared range
        store(P, 1, 0, 4, 4); // above it
        store(P, 2, 0, 0, 4); // not live
        applier.applyPayload(new PublisherId("elsewhere", 0xAAAAL),
                KvWire.stored(1, 0, 2, null, engine(1, 4), T)); // live, but in another namespace
        assertThat(count(KvEventResult.INDEXED)).isEqualTo(2);
        assertThat(count(KvEventResult.IDENTITY_MISMATCH)).isEqualTo(4);
        assertThat(depth(1, 2)).isEqualTo(4);
        assertThat(depth(1, 3)).isEqualTo(2);
        assertThat(applier.ranks()).isEqualTo(2);
        assertThat(registry.get(KvIndexMetrics.RANK_BLOCKS).tag("worker", "1").tag("dp_rank", "2").gauge().value())
                .isEqualTo(4);
    }

    @Test
    void departedWorkersAndUndeclaredRanksLeaveWithTheFleetView() {
        applier.applyFleet(Map.of(new WorkerId(NS, 1), new DpRanks(0, 2), new WorkerId(NS, 2), DpRanks.RANK_ZERO), 5);
        store(P, 1, 0, 0, 4);
        store(P, 1, 0, 1, 4);
        store(Q, 2, 0, 0, 4);
        assertThat(index.ownerships()).isEqualTo(12);
        applier.applyFleet(Map.of(new WorkerId(NS, 1), DpRanks.RANK_ZERO), 4); // older: ignored
        assertThat(index.ownerships()).isEqualTo(12);
        applier.applyFleet(Map.of(new WorkerId(NS, 1), DpRanks.RANK_ZERO), 6);
        assertThat(depth(1, 0)).isEqualTo(4);
        assertThat(depth(1, 1)).isZero();
        assertThat(depth(2, 0)).isZero();
        assertThat(index.ownerships()).isEqualTo(4);
        assertThat(applier.ranks()).isEqualTo(1);
        assertThat(registry.find(KvIndexMetrics.RANK_BLOCKS).gauges()).hasSize(1);
        store(Q, 2, 1, 0, 4);
        assertThat(count(KvEventResult.IDENTITY_MISMATCH)).isEqualTo(1);
    }

    @Test
    void replaysAreSkippedEqualIdsAppliedAndGapsClearTheRank() {
        applier.applyFleet(Map.of(new WorkerId(NS, 1), DpRanks.RANK_ZERO), 1);
        store(P, 1, 10, 0, 4);
        applier.applyPayload(P, KvWire.removed(1, 9, 0, 1003)); // replay
        assertThat(count(KvEventResult.REPLAY)).isEqualTo(1);
        assertThat(depth(1, 0)).isEqualTo(4);
        applier.applyPayload(P, KvWire.removed(1, 10, 0, 1003)); // same id as the store: applied
        assertThat(depth(1, 0)).isEqualTo(3);
        applier.applyPayload(P, KvWire.removed(1, 11, 0, 1002));
        assertThat(depth(1, 0)).isEqualTo(2);
        assertThat(count(KvEventResult.GAP)).isZero();
        // 12 and 13 were lost: the rank is cleared, then the event that showed the gap applies.
        applier.applyPayload(P, KvWire.stored(1, 14, 0, null, new long[] {5000}, new long[] {T[0]}));
        assertThat(count(KvEventResult.GAP)).isEqualTo(1);
        assertThat(index.blocksOf(0)).isEqualTo(1);
        assertThat(depth(1, 0)).isEqualTo(1);
        applier.applyPayload(P, KvWire.stored(1, 15, 0, 5000L, new long[] {5001}, new long[] {T[1]}));
        assertThat(depth(1, 0)).isEqualTo(2);
        applier.applyPayload(P, KvWire.cleared(1, 16, 0));
        assertThat(depth(1, 0)).isZero();
    }

    @Test
    void aClosedSubscriptionTakesItsRanksAndCursorsWithIt() {
        applier.applyFleet(Map.of(new WorkerId(NS, 1), DpRanks.RANK_ZERO), 1);
        store(P, 1, 100, 0, 4);
        store(Q, 1, 101, 0, 4); // a rank belongs to the subscription that first fed it
        assertThat(count(KvEventResult.IDENTITY_MISMATCH)).isEqualTo(1);
        applier.closeSource(P);
        assertThat(depth(1, 0)).isZero();
        assertThat(index.nodes()).isZero();
        store(Q, 1, 3, 0, 2); // a new source starts from the first event it sees
        assertThat(depth(1, 0)).isEqualTo(2);
    }

    @Test
    void otherTiersAreCountedNotIndexed() {
        applier.applyFleet(Map.of(new WorkerId(NS, 1), DpRanks.RANK_ZERO), 1);
        applier.applyPayload(P, KvWire.clearedOnTier(1, "host_pinned", 1, 0));
        assertThat(count(KvEventResult.OTHER_TIER)).isEqualTo(1);
        assertThat(applier.ranks()).isZero();
    }

    @Test
    void aSubscriptionCreatesAtMostItsCeilingOfRanks() {
        use(new IndexLimits(1 << 10, 1 << 10, 1 << 12, 16, 3, 100));
        applier.applyFleet(Map.of(new WorkerId(NS, 1), new DpRanks(0, 10)), 1);
        for (int dp = 0; dp < 10; dp++) {
            store(P, 1, 0, dp, 1);
        }
        assertThat(applier.ranks()).isEqualTo(3);
        assertThat(count(KvEventResult.OVER_CAPACITY)).isEqualTo(7);
    }

    @Test
    void aHostilePublisherStaysInsideEveryCeiling() {
        IndexLimits limits = new IndexLimits(2000, 500, 3000, 8, 64, 12);
        use(limits);
        applier.applyFleet(Map.of(new WorkerId(NS, 1), new DpRanks(0, 8), new WorkerId(NS, 2), new DpRanks(0, 8)), 1);
        SplittableRandom r = new SplittableRandom(99);
        long[] blockHashes = new long[64];
        long[] tokens = new long[64];
        long id = 0;
        for (int msg = 0; msg < 5_000; msg++) {
            for (int i = 0; i < 64; i++) {
                blockHashes[i] = r.nextLong();
                tokens[i] = r.nextInt(4) == 0 ? T[i % 4] : r.nextLong() >>> 1;
            }
            long worker = 1 + r.nextInt(2);
            int dp = r.nextInt(10); // 8 and 9 are not declared
            byte[] payload = switch (r.nextInt(4)) {
                case 0 -> KvWire.stored(worker, id++, dp, null, blockHashes, tokens);
                case 1 -> KvWire.stored(worker, id++, dp, r.nextLong(), blockHashes, tokens); // never anchored
                case 2 -> KvWire.removed(worker, id++, dp, blockHashes);
                default -> KvWire.stored(worker, id + 1000, dp, null, blockHashes, tokens); // gaps
            };
            applier.applyPayload(P, payload);
            assertThat(index.nodes()).isLessThanOrEqualTo(limits.maxNodes());
            assertThat(index.ownerships()).isLessThanOrEqualTo(limits.maxOwnerships());
        }
        assertThat(count(KvEventResult.IDENTITY_MISMATCH)).isGreaterThan(0);
        assertThat(count(KvEventResult.UNKNOWN_PARENT)).isGreaterThan(0);
        assertThat(count(KvEventResult.OVER_CAPACITY)).isGreaterThan(0);
        assertThat(applier.ranks()).as("16 declared, 12 at most").isEqualTo(limits.maxRanks());
        for (int rank = 0; rank < 16; rank++) {
            assertThat(index.blocksOf(rank)).isLessThanOrEqualTo(limits.maxBlocksPerRank());
        }
        applier.applyFleet(Map.of(), 2);
        assertThat(index.nodes()).as("every node goes with its ranks").isZero();
        assertThat(index.ownerships()).isZero();
    }
}
