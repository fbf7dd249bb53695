package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.BrokerConnector;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvEventResult;
import dev.continuum.router.kv.index.KvIndexMetrics;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.kv.supervisor.KvSupervisor;
import dev.continuum.router.eventplane.ChannelDialer;
import dev.continuum.router.load.LoadConfig;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.sim.KvEventEncoding;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kv-events through the event broker as its own OS process, on {@link EventBrokerEndToEndTest}'s fleet (fabric8's
 * mock API server with DynamoWorkerMetadata, JeroMQ publishers), each publisher also advertising a kv-events
 * channel. Two KV indexes follow the same discovery, each fed by its own KV supervisor: one dialing directly, one
 * through the bus. Scenarios: the same index (find_matches answers, per-rank block counts) on the same replay,
 * with late event IDs, another publisher's ID, undeclared workers and ranks, a removal and a forward gap; after
 * SIGKILL of the broker the removals published meanwhile are missed, and once a new broker restores the
 * subscriptions the next event's jump is a gap that clears the rank, so the missed removals do not linger.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class KvEventsBrokerEndToEndTest {
    private static final int BLOCK = 64;
    /** A two-block prefix every worker stores (engine hashes are sequence hashes, the same on every worker). */
    private static final long[] SHARED_TOKENS = {0x51, 0x52};
    private static final long[] SHARED_BLOCKS = {0xB51, 0xB52};
    /** Stored only by events the index must refuse: no probe may ever match it. */
    private static final long[] POISON_TOKENS = {0xBAD};
    private static final long[] POISON_BLOCKS = {0xEBAD};
    /** The block stored after the broker's restart. */
    private static final long[] AFTER_TOKENS = {0x61};
    private static final long[] AFTER_BLOCKS = {0xB61};
    /** A worker ID no DynamoWorkerMetadata declares. */
    private static final long UNDECLARED_WORKER = 0x7777;

    @TempDir
    Path dir;
    private final EventBrokerEndToEndTest fleet = new EventBrokerEndToEndTest();
    private @Nullable Side direct;
    private @Nullable Side broker;
    /** Per publisher (fleet order): the next kv-events event_id of its worker's rank 0. */
    private long[] nextEventId;

    /** One KV index and the supervisor feeding it under one transport. */
    private final class Side {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final KvIndexWriter writer = new KvIndexWriter(meters, IndexLimits.DEFAULT);
        final KvSupervisor kv;
        final AutoCloseable following;

        Side(Transport transport) {
            kv = KvSupervisor.builder(writer, meters)
                    .load(new LoadConfig(LoadConfig.DEFAULTS.maxStaleness(), transport, null))
                    .dialer(new ChannelDialer(ChannelDialer.DEFAULT.direct(), () -> new BrokerConnector(fleet.bus.bus())))
                    .build();
            writer.start().join();
            kv.start().join();
            following = kv.follow(fleet.discovery.registry());
        }

        void stop() throws Exception {
            following.close();
            kv.stop().join();
            writer.stop().join();
        }

        boolean all(SubscriptionState state) {
            List<SubscriptionView> views = kv.subscriptions();
            return views.size() == fleet.publisherCount && views.stream().allMatch(v -> v.state() == state);
        }

        /** Leading blocks of {@code tokens} the index says {@code p}'s worker (rank 0) holds. */
        int matched(long[] tokens, WorkerPod p) {
            OverlapScores out = new OverlapScores(64);
            writer.index().findMatches(new BlockHashes(BLOCK, tokens), out);
            return out.matchedBlocksOf(p.instanceId, 0);
        }

        /** The rank_blocks gauge of {@code p}'s worker, rank 0; -1 when the index has no such rank. */
        int blocks(WorkerPod p) {
            Gauge g = meters.find(KvIndexMetrics.RANK_BLOCKS).tag("worker", Long.toHexString(p.instanceId))
                    .tag("dp_rank", "0").gauge();
            return g == null ? -1 : (int) g.value();
        }

        Map<KvEventResult, Double> counts() {
            Map<KvEventResult, Double> out = new EnumMap<>(KvEventResult.class);
            for (KvEventResult r : KvEventResult.values()) {
                out.put(r, writer.metrics().total(r));
            }
            return out;
        }

        /**
         * What the picker and the operator can see of the index: every probe's answer (each rank's matched
         * depth), every rank's block count, nodes and ownerships.
         */
        Map<String, Object> state() {
            Map<String, Object> out = new TreeMap<>();
            Map<String, long[]> probes = new TreeMap<>();
            probes.put("shared", SHARED_TOKENS);
            probes.put("poison", POISON_TOKENS);
            probes.put("after", AFTER_TOKENS);
            for (int i = 0; i < fleet.publishers.size(); i++) {
                probes.put("own-" + i, concat(SHARED_TOKENS, ownTokens(i)));
                probes.put("rebuilt-" + i, rebuiltTokens(i));
            }
            for (Map.Entry<String, long[]> probe : probes.entrySet()) {
                OverlapScores scores = new OverlapScores(64);
                writer.index().findMatches(new BlockHashes(BLOCK, probe.getValue()), scores);
                List<String> answer = new ArrayList<>();
                for (int i = 0; i < scores.size(); i++) {
                    answer.add(Long.toHexString(scores.workerId(i)) + "/" + scores.dpRank(i) + "="
                            + scores.matchedBlocks(i));
                }
                answer.sort(null);
                out.put("matches " + probe.getKey(), answer);
            }
            for (Gauge g : meters.find(KvIndexMetrics.RANK_BLOCKS).gauges()) {
                out.put("blocks " + g.getId().getTag("worker") + "/" + g.getId().getTag("dp_rank"), (int) g.value());
            }
            out.put("nodes", writer.index().nodes());
            out.put("ownerships", writer.index().ownerships());
            return out;
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        fleet.kvEvents = true;
        fleet.dir = dir;
        fleet.setUp();
        nextEventId = new long[fleet.publisherCount];
        java.util.Arrays.fill(nextEventId, 1);
        direct = new Side(Transport.DIRECT);
        broker = new Side(Transport.BROKER);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (Side s : new Side[] {broker, direct}) {
                if (s != null) {
                    s.stop();
                }
            }
        } finally {
            fleet.tearDown();
        }
    }

    @Test
    void directAndBrokerBuildTheSameIndexAndGapClearingCatchesRemovalsMissedWhileTheBrokerWasDead()
            throws Exception {
        Side direct = this.direct;
        Side broker = this.broker;
        List<WorkerPod> pods = fleet.publishers;
        int n = pods.size();
        Process a = fleet.startBroker("broker-a", "broker-a", EventBrokerEndToEndTest.TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> direct.all(SubscriptionState.CONNECTED)
                && broker.all(SubscriptionState.CONNECTED));
        assertThat(broker.kv.subscriptions()).extracting(SubscriptionView::transport).containsOnly(Transport.BROKER);
        assertThat(broker.kv.subscriptions()).extracting(SubscriptionView::family).containsOnly("kv-events");

        // Warm-up: the same root-anchored store under fresh event IDs (re-storing is idempotent) until both
        // indexes hold it for every worker (PUB drops until the subscription has joined).
        await().pollInSameThread().pollInterval(Duration.ofMillis(50)).atMost(Duration.ofSeconds(30)).until(() -> {
            for (int i = 0; i < n; i++) {
                send(i, stored(pods.get(i).instanceId, nextEventId[i]++, 0, null, SHARED_BLOCKS, SHARED_TOKENS));
            }
            return pods.stream().allMatch(p -> direct.matched(SHARED_TOKENS, p) == 2
                    && broker.matched(SHARED_TOKENS, p) == 2);
        });
        assertThat(broker.state()).isEqualTo(direct.state());

        // The replay, per worker: a store, a late (replayed) event ID, the same event under another publisher's
        // ID, events naming another subscription's worker, an undeclared rank and an undeclared worker, then a
        // removal (the phase's end marker).
        Map<KvEventResult, Double> directBefore = direct.counts();
        Map<KvEventResult, Double> brokerBefore = broker.counts();
        for (int i = 0; i < n; i++) {
            WorkerPod p = pods.get(i);
            long e = nextEventId[i];
            long[] own = ownBlocks(i);
            send(i, stored(p.instanceId, e, 0, SHARED_BLOCKS[1], own, ownTokens(i)));
            send(i, stored(p.instanceId, e - 1, 0, null, POISON_BLOCKS, POISON_TOKENS));             // replay
            p.publishKv(p.kvPublisherId ^ 1, stored(p.instanceId, e + 1, 0, null, POISON_BLOCKS, POISON_TOKENS));
            send(i, stored(pods.get((i + 1) % n).instanceId, e + 1, 0, null, POISON_BLOCKS, POISON_TOKENS));
            send(i, stored(p.instanceId, e + 1, 1, null, POISON_BLOCKS, POISON_TOKENS));           // rank 1: undeclared
            send(i, stored(UNDECLARED_WORKER, e + 1, 0, null, POISON_BLOCKS, POISON_TOKENS));
            send(i, removed(p.instanceId, e + 1, 0, own[1]));
            nextEventId[i] = e + 2;
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> pods.stream().allMatch(p -> {
            long[] probe = concat(SHARED_TOKENS, ownTokens(pods.indexOf(p)));
            return direct.matched(probe, p) == 3 && broker.matched(probe, p) == 3;
        }));
        assertThat(broker.state()).isEqualTo(direct.state());
        for (Side s : List.of(direct, broker)) {
            assertThat(s.state().get("matches poison")).isEqualTo(List.of());
            for (WorkerPod p : pods) {
                assertThat(s.blocks(p)).isEqualTo(3);
            }
            assertThat(s.meters.find(KvIndexMetrics.RANK_BLOCKS).gauges()).hasSize(n);
        }
        // (indexed is not compared: warm-up stores still in flight when the phase began count there too)
        Map<KvEventResult, Double> replayDelta = Map.of(KvEventResult.REPLAY, 1.0 * n,
                KvEventResult.IDENTITY_MISMATCH, 4.0 * n, KvEventResult.GAP, 0.0);
        assertThat(delta(directBefore, direct.counts(), replayDelta.keySet())).isEqualTo(replayDelta);
        assertThat(delta(brokerBefore, broker.counts(), replayDelta.keySet())).isEqualTo(replayDelta);

        // A forward gap: the rank is cleared before the event applies; the rank then rebuilds in order.
        directBefore = direct.counts();
        brokerBefore = broker.counts();
        for (int i = 0; i < n; i++) {
            long e = nextEventId[i] + 3;
            send(i, stored(pods.get(i).instanceId, e, 0, null, rebuiltBlocks(i), rebuiltTokens(i)));
            send(i, stored(pods.get(i).instanceId, e + 1, 0, null, SHARED_BLOCKS, SHARED_TOKENS));
            nextEventId[i] = e + 2;
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> pods.stream().allMatch(p -> {
            long[] rebuilt = rebuiltTokens(pods.indexOf(p));
            return direct.matched(rebuilt, p) == 1 && broker.matched(rebuilt, p) == 1
                    && direct.matched(SHARED_TOKENS, p) == 2 && broker.matched(SHARED_TOKENS, p) == 2;
        }));
        assertThat(broker.state()).isEqualTo(direct.state());
        for (Side s : List.of(direct, broker)) {
            for (int i = 0; i < n; i++) {
                // The worker's own block (stored before the gap) went with the clear.
                assertThat(s.matched(concat(SHARED_TOKENS, ownTokens(i)), pods.get(i))).isEqualTo(2);
                assertThat(s.blocks(pods.get(i))).isEqualTo(3);
            }
        }
        assertThat(direct.counts().get(KvEventResult.GAP) - directBefore.get(KvEventResult.GAP)).isEqualTo(n);
        assertThat(broker.counts().get(KvEventResult.GAP) - brokerBefore.get(KvEventResult.GAP)).isEqualTo(n);
        Map<String, Object> beforeKill = broker.state();

        // SIGKILL: the broker's subscriptions go pending and keep their ranks; the direct ones do not notice.
        a.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(20)).until(() -> broker.all(SubscriptionState.PENDING));
        assertThat(direct.all(SubscriptionState.CONNECTED)).isTrue();
        // Meanwhile every worker evicts all it holds: the direct index follows, the broker-fed one misses it.
        for (int i = 0; i < n; i++) {
            send(i, removed(pods.get(i).instanceId, nextEventId[i]++, 0, SHARED_BLOCKS[0], SHARED_BLOCKS[1],
                    rebuiltBlocks(i)[0]));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> pods.stream().allMatch(p -> direct.blocks(p) == 0));
        assertThat(broker.state()).isEqualTo(beforeKill);
        for (WorkerPod p : pods) {
            assertThat(broker.matched(SHARED_TOKENS, p)).isEqualTo(2);
        }

        // A new broker restores the subscriptions. The next store the broker-fed index receives jumps past the
        // missed event ID: a gap, which clears the rank, so the missed removals do not linger there.
        directBefore = direct.counts();
        brokerBefore = broker.counts();
        fleet.startBroker("broker-a2", "broker-a", EventBrokerEndToEndTest.TOKEN_A);
        await().atMost(Duration.ofSeconds(60)).until(() -> broker.all(SubscriptionState.CONNECTED));
        await().pollInSameThread().pollInterval(Duration.ofMillis(50)).atMost(Duration.ofSeconds(30)).until(() -> {
            for (int i = 0; i < n; i++) {
                send(i, stored(pods.get(i).instanceId, nextEventId[i]++, 0, null, AFTER_BLOCKS, AFTER_TOKENS));
            }
            return pods.stream().allMatch(p -> direct.matched(AFTER_TOKENS, p) == 1
                    && broker.matched(AFTER_TOKENS, p) == 1);
        });
        assertThat(broker.state()).isEqualTo(direct.state());
        for (Side s : List.of(direct, broker)) {
            for (int i = 0; i < n; i++) {
                assertThat(s.matched(SHARED_TOKENS, pods.get(i))).isZero();
                assertThat(s.matched(rebuiltTokens(i), pods.get(i))).isZero();
                assertThat(s.blocks(pods.get(i))).isEqualTo(1);
            }
        }
        assertThat(broker.counts().get(KvEventResult.GAP) - brokerBefore.get(KvEventResult.GAP)).isEqualTo(n);
        assertThat(direct.counts().get(KvEventResult.GAP) - directBefore.get(KvEventResult.GAP)).isZero();
    }

    private void send(int pod, byte[] routerEvent) {
        WorkerPod p = fleet.publishers.get(pod);
        p.publishKv(p.kvPublisherId, routerEvent);
    }

    private static Map<KvEventResult, Double> delta(Map<KvEventResult, Double> before, Map<KvEventResult, Double> after,
                                                    java.util.Set<KvEventResult> results) {
        Map<KvEventResult, Double> out = new EnumMap<>(KvEventResult.class);
        for (KvEventResult r : results) {
            out.put(r, after.get(r) - before.get(r));
        }
        return out;
    }

    /** Worker {@code pod}'s own two blocks after the shared prefix. */
    private static long[] ownTokens(int pod) {
        return new long[] {0x1000 + 16L * pod + 1, 0x1000 + 16L * pod + 2};
    }

    private static long[] ownBlocks(int pod) {
        return new long[] {0xC000 + 16L * pod + 1, 0xC000 + 16L * pod + 2};
    }

    /** The root-anchored block the gap's event stores. */
    private static long[] rebuiltTokens(int pod) {
        return new long[] {0x2000 + 16L * pod + 1};
    }

    private static long[] rebuiltBlocks(int pod) {
        return new long[] {0xD000 + 16L * pod + 1};
    }

    private static long[] concat(long[] a, long[] b) {
        long[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    // RouterEvent payloads from the simulator's encoder (router-sim's KvEventEncoding: upstream's named msgpack
    // layout, written independently of the router's decoder).

    private static byte[] stored(long worker, long eventId, int dpRank, @Nullable Long parent, long[] blocks,
                                 long[] tokens) {
        return KvEventEncoding.stored(worker, eventId, dpRank, parent, blocks, tokens, 0, blocks.length);
    }

    private static byte[] removed(long worker, long eventId, int dpRank, long... blocks) {
        return KvEventEncoding.removed(worker, eventId, dpRank, blocks, 0, blocks.length);
    }
}
