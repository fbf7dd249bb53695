package dev.continuum.router.replicas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.eventplane.nats.NatsConfig;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.kv.index.SampledChain;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.KvPickListener;
import dev.continuum.router.shim.KvPickerSettings;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PromptBlocks;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.WorkerPin;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.shim.SelectionReason;
import dev.continuum.router.shim.SessionAffinity;
import dev.continuum.router.testing.NatsServerExtension;
import dev.continuum.router.testing.NpmFixtures;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three router replicas in one JVM, each with its own picker, active sequences and NATS connection, against a real
 * nats-server: a replica's dispatches count in its peers' pickers, an end is seen by them, a killed replica's part
 * leaves its peers within two heartbeats, and a NATS crash and restart leaves every replica routing on its own view,
 * then equal views again from snapshots. Every wait polls a condition with a deadline.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicaSyncEndToEndTest {
    @RegisterExtension
    static final NatsServerExtension NATS = NatsServerExtension.plain();

    private static final String NS = "dynamo";
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final SampleKey RANK = new SampleKey(new WorkerId(NS, 1), 0);
    private static final SampleKey RANK2 = new SampleKey(new WorkerId(NS, 2), 0);
    private static final Duration HEARTBEAT = Duration.ofMillis(100);
    private static final Duration PEER_TIMEOUT = Duration.ofMillis(200);

    private final List<Replica> replicas = new ArrayList<>();

    /** One router's picker and sync, as RouterProcess wires them. */
    private final class Replica {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final MutableDynamoRegistry fleet = MutableDynamoRegistry.create();
        final LoadBasedPicking picking;
        final NatsConnection nats = new NatsConnection(meters);
        final ReplicaSync sync;
        final List<Selection> open = new ArrayList<>();
        final OverlaySharing sharing = new OverlaySharing();

        Replica(String id) {
            ModelCard card = new ModelCard(MODEL, null, false, 16, ModelCard.WorkerCapacity.UNKNOWN, null, null,
                    null, ModelCard.CardArtifacts.NONE, null, "{}");
            Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
            fleet.reconfigure(true, DiscoverySourceKind.FILE, List.of(NS), FleetView.of(List.of(
                    new DynamoWorker(new WorkerId(NS, 1), WorkerRole.AGGREGATED, "backend", "generate", card, t0, t0),
                    new DynamoWorker(new WorkerId(NS, 2), WorkerRole.AGGREGATED, "backend", "generate", card, t0, t0)),
                    List.of()));
            picking = LoadBasedPicking.create(LoadSupervisor.builder(meters).build().store(), System::nanoTime, meters,
                    fleet);
            picking.start().join();
            nats.apply(new NatsConfig(List.of(NATS.url()), null, null, Duration.ofSeconds(2), Duration.ofMillis(50),
                    null));
            nats.start().join();
            sync = new ReplicaSync(picking.activeSequences(), nats, meters, System::nanoTime);
            sync.sharePredictions(sharing);
            sync.apply(new ReplicasConfig(true, "g", id, HEARTBEAT, PEER_TIMEOUT, Duration.ofMillis(5), 256,
                    64 * 1024, 16, Duration.ofMinutes(10)));
            sync.start().join();
            replicas.add(this);
        }

        void dispatch(int n) {
            for (int i = 0; i < n; i++) {
                Selection s = picking.picker().pick(fleet.snapshot(), new PickRequest(MODEL, Set.of(NS), 100));
                assertThat(s).isNotNull();
                open.add(s);
            }
        }

        /** A KV-scored dispatch of a prompt of {@code hashes} (approximate mode, nothing cached): the rank picked. */
        SampleKey dispatchPrompt(long[] hashes) {
            Selection s = picking.kvAware((h, out) -> { }, () -> KvPickerSettings.DEFAULTS, meters, APPROXIMATE)
                    .pick(fleet.snapshot(), new PickRequest(MODEL, Set.of(NS), 16L * hashes.length,
                            new PromptBlocks(16 * hashes.length, List.of(new BlockHashes(16, hashes)))));
            assertThat(s).isNotNull();
            open.add(s);
            return new SampleKey(s.decode().worker(), s.decode().dpRank());
        }

        void end(int n) {
            for (int i = 0; i < n; i++) {
                open.remove(open.size() - 1).dispatch().ended();
            }
        }

        /** Sequences the picker counts on both ranks: own and peers'. */
        int counted() {
            return picking.activeSequences().activeSequences(RANK) + picking.activeSequences().activeSequences(RANK2);
        }

        long prefillTokens() {
            return picking.activeSequences().activePrefillTokens(RANK)
                    + picking.activeSequences().activePrefillTokens(RANK2);
        }

        /** One turn of {@code session}, as the shim dispatcher makes it: bound rank in, binding out. */
        Selection turn(String session) {
            SessionAffinity affinity = sync.sessions();
            Selection s = picking.picker().pick(fleet.snapshot(), new PickRequest(MODEL, Set.of(NS), 100, null, null,
                    affinity.bound(session)));
            assertThat(s).isNotNull();
            affinity.bind(session, s.decode());
            s.dispatch().ended();
            return s;
        }

        void stop() {
            sync.stop().join();
            nats.stop().join();
            picking.stop().join();
        }
    }

    private static final KvPickListener APPROXIMATE = new KvPickListener() {
        @Override
        public boolean approximate(String namespace, boolean kvEventsPublished) {
            return true;
        }

        @Override
        public void picked(WorkerPin rank, BlockHashes hashes) {
        }
    };

    /**
     * The seam as router-kv fills it, on router-kv's real parts: its sampled chain on the sending side, a predicted
     * cache of this replica's own (its own secret root) on the receiving side. Only the mode and TTL decisions of
     * router-kv's {@code KvModes} are left out: every namespace is approximate, predictions live a minute.
     */
    private static final class OverlaySharing implements SharedPredictions {
        final PredictedBlocks overlay = new PredictedBlocks(new java.security.SecureRandom().nextLong(),
                System::nanoTime, PredictedBlocks.Counts.NONE);

        @Override
        public SharedPredictions.Sample sample(SampleKey rank, BlockHashes hashes) {
            return SampledChain.sampleOf(hashes.hashes());
        }

        @Override
        public void peerPredicted(int peer, SampleKey rank, int stride, long[] keys) {
            overlay.predictPeer(peer, rank.worker().namespace(), rank.worker().instanceId(), (int) rank.dpRank(),
                    stride, keys, TimeUnit.MINUTES.toNanos(1), 0);
        }

        @Override
        public void forgetPeer(int peer) {
            overlay.forgetPeer(peer);
        }

        /** The depth this replica's overlay gives {@code rank} for a prompt of {@code hashes}. */
        int depth(SampleKey rank, long[] hashes) {
            OverlapScores out = new OverlapScores(8);
            overlay.deepen(hashes, out);
            return out.matchedBlocksOf(rank.worker().instanceId(), (int) rank.dpRank());
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Replica r : replicas) {
            r.stop();
        }
        NATS.start(); // a test that killed it leaves it running for the next
    }

    private static void within(Duration d, org.awaitility.core.ThrowingRunnable check) {
        await().atMost(d).pollInterval(Duration.ofMillis(10)).untilAsserted(check);
    }

    @Test
    void peersCountEachOthersDispatchesAndDropAKilledReplicaWithinTwoHeartbeats() {
        Replica a = new Replica("a");
        Replica b = new Replica("b");
        Replica c = new Replica("c");
        within(Duration.ofSeconds(10), () -> {
            assertThat(b.sync.peers()).extracting(PeerView::replica).contains("a", "c");
            assertThat(b.sync.peers()).allMatch(PeerView::synced);
        });

        a.dispatch(3);
        b.dispatch(2);
        within(Duration.ofSeconds(5), () -> {
            assertThat(a.counted()).isEqualTo(5);
            assertThat(b.counted()).isEqualTo(5);
            assertThat(c.counted()).isEqualTo(5);
            // Uncached prompt tokens travel too: 100 per dispatch until the first token.
            assertThat(c.prefillTokens()).isEqualTo(500);
        });

        a.end(1);
        within(Duration.ofSeconds(5), () -> assertThat(c.counted()).isEqualTo(4));
        // The admin view is refreshed every heartbeat.
        within(Duration.ofSeconds(5), () -> assertThat(c.sync.peers()).filteredOn(p -> p.replica().equals("a"))
                .singleElement().satisfies(p -> assertThat(p.sequences()).isEqualTo(2)));

        // A replica killed without ending anything: its peers drop exactly its part within two heartbeats.
        long killed = System.nanoTime();
        a.sync.stop().join();
        a.nats.stop().join();
        within(Duration.ofSeconds(5), () -> {
            assertThat(b.counted()).isEqualTo(2);
            assertThat(c.counted()).isEqualTo(2);
        });
        Duration gone = Duration.ofNanos(System.nanoTime() - killed);
        assertThat(gone).isLessThan(Duration.ofSeconds(2));
        assertThat(c.sync.metrics().departureCount(ReplicaMetrics.Departure.TIMEOUT)).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aSessionsTurnsGoToOneRankWhicheverReplicaRoutesThem() {
        Replica a = new Replica("a");
        Replica b = new Replica("b");
        within(Duration.ofSeconds(10), () -> assertThat(b.sync.peers()).extracting(PeerView::synced)
                .containsExactly(true));
        Selection first = a.turn("conversation-1");
        long worker = first.decode().worker().instanceId();
        // Until B has A's bind event its picker may choose either worker; once it has, every turn follows.
        within(Duration.ofSeconds(5), () -> assertThat(b.sync.sessions().bound("conversation-1")).isNotNull());
        for (int i = 0; i < 6; i++) {
            Selection s = (i % 2 == 0 ? b : a).turn("conversation-1");
            assertThat(s.decode().worker().instanceId()).isEqualTo(worker);
            assertThat(s.decodeReason()).isEqualTo(SelectionReason.SESSION);
        }
        // Another session is picked as usual (round robin without load signals): both workers get some.
        Set<Long> workers = new java.util.HashSet<>();
        for (int i = 0; i < 4; i++) {
            workers.add(b.turn("other-" + i).decode().worker().instanceId());
        }
        assertThat(workers).hasSize(2);
    }

    @Test
    void natsDownEveryReplicaRoutesOnItsOwnViewAndResynchronisesWhenItReturns() throws Exception {
        Replica b = new Replica("b");
        Replica c = new Replica("c");
        b.dispatch(2);
        within(Duration.ofSeconds(10), () -> assertThat(c.counted()).isEqualTo(2));

        NATS.kill();
        // Peers go after peer_timeout; each keeps routing on its own view, and no pick fails.
        within(Duration.ofSeconds(5), () -> assertThat(c.counted()).isZero());
        b.dispatch(1);
        c.dispatch(1);
        assertThat(b.counted()).isEqualTo(3);

        NATS.start();
        long back = System.nanoTime();
        within(Duration.ofSeconds(10), () -> {
            assertThat(c.counted()).isEqualTo(4);
            assertThat(b.counted()).isEqualTo(4);
        });
        assertThat(c.sync.metrics().resyncCount(ReplicaMetrics.Resync.JOIN)
                + c.sync.metrics().resyncCount(ReplicaMetrics.Resync.RECONNECT)).isGreaterThanOrEqualTo(2);
        System.out.printf("views equal %d ms after nats-server restarted%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back));
    }

    /**
     * The wire format against a second implementation: node's NATS client with a decoder written from
     * docs/replicas.md (test-fixtures/npm/nats/replica-observer.mjs) reads the same messages off the same
     * nats-server as replica b, joins late through its own snapshot request (encoded by node), and must end with
     * what b's picker counts for a: per rank, the prefill tokens, blocks and sequences; a's batch number and epoch;
     * a's session binding.
     */
    @Test
    void anIndependentNodeReaderFoldsTheStreamIntoTheSameStateAsAPeer() throws Exception {
        Replica a = new Replica("a");
        Replica b = new Replica("b");
        a.dispatch(6);
        a.open.get(0).dispatch().firstToken();
        a.end(2);
        Selection turn = a.turn("session-1");

        java.util.concurrent.atomic.AtomicReference<String> latest = new java.util.concurrent.atomic.AtomicReference<>("");
        Process node = observer(latest);
        try {
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            // Batches after the snapshot: applied on top of it, in order.
            within(Duration.ofSeconds(20), () -> assertThat(json.readTree(latest.get()).path("replicas").path("a")
                    .path("synced").asBoolean()).as(latest.get()).isTrue());
            a.dispatch(3);
            a.open.get(a.open.size() - 1).dispatch().firstToken();
            a.end(1);

            within(Duration.ofSeconds(20), () -> {
                com.fasterxml.jackson.databind.JsonNode state = json.readTree(latest.get());
                assertThat(state.path("errors")).as(latest.get()).isEmpty();
                com.fasterxml.jackson.databind.JsonNode seen = state.path("replicas").path("a");
                assertThat(seen.path("sequences").asInt()).isEqualTo(a.sync.own().sequences()).isEqualTo(6);
                PeerView peer = b.sync.peers().stream().filter(p -> p.replica().equals("a")).findFirst()
                        .orElse(null);
                assertThat(peer).as("b follows a").isNotNull();
                assertThat(seen.path("seq").asLong()).isEqualTo(peer.lastSeq()).isEqualTo(a.sync.own().lastSeq());
                assertThat(seen.path("epoch").asText()).isEqualTo(Long.toUnsignedString(peer.epoch()));
                for (SampleKey rank : List.of(RANK, RANK2)) {
                    com.fasterxml.jackson.databind.JsonNode r = seen.path("ranks").path(key(rank));
                    assertThat(r.path("tokens").asLong()).as(key(rank))
                            .isEqualTo(b.picking.activeSequences().activePrefillTokens(rank));
                    assertThat(r.path("blocks").asLong()).as(key(rank))
                            .isEqualTo(b.picking.activeSequences().activeBlocks(rank));
                    assertThat(r.path("sequences").asInt()).as(key(rank))
                            .isEqualTo(b.picking.activeSequences().activeSequences(rank));
                }
                assertThat(state.path("bindings").path("session-1").asText()).isEqualTo(key(
                        new SampleKey(turn.decode().worker(), turn.decode().dpRank())));
                assertThat(state.path("replicas").path("b").path("sequences").asInt()).isZero();
            });
            // Something was counted: the comparison is not of two empty views.
            assertThat(b.counted()).isEqualTo(6);
            assertThat(b.prefillTokens()).isPositive();
        } finally {
            close(node);
        }
    }

    /**
     * Approximate mode: a replica's KV-scored dispatch carries its sampled prediction to every peer, whose overlay
     * then matches the prompt on the rank picked (to its deepest sampled block), and to the node reader, which
     * decodes the version-2 message from docs/replicas.md; the peer's departure takes the prediction away.
     */
    @Test
    void approximatePredictionsReachEveryPeersOverlayAndLeaveWithTheirReplica() throws Exception {
        Replica a = new Replica("a");
        Replica b = new Replica("b");
        Replica c = new Replica("c");
        java.util.concurrent.atomic.AtomicReference<String> latest = new java.util.concurrent.atomic.AtomicReference<>("");
        Process node = observer(latest);
        try {
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            within(Duration.ofSeconds(20), () -> assertThat(json.readTree(latest.get()).path("replicas").path("a")
                    .path("synced").asBoolean()).as(latest.get()).isTrue());
            long[] prompt = new long[100];
            java.util.Arrays.setAll(prompt, i -> 0x5EED_0000L + i);
            SampleKey rank = a.dispatchPrompt(prompt); // 100 blocks: stride 16, keys at blocks 16 to 96
            long[] other = prompt.clone();
            other[40] = -1; // shares 40 blocks: the sample at 32
            within(Duration.ofSeconds(20), () -> {
                assertThat(b.sharing.depth(rank, prompt)).isEqualTo(96);
                assertThat(c.sharing.depth(rank, other)).isEqualTo(32);
                com.fasterxml.jackson.databind.JsonNode state = json.readTree(latest.get());
                assertThat(state.path("errors")).as(latest.get()).isEmpty();
                com.fasterxml.jackson.databind.JsonNode seen = state.path("replicas").path("a").path("predicted")
                        .path(key(rank));
                assertThat(seen.path("predictions").asInt()).as(latest.get()).isEqualTo(1);
                assertThat(seen.path("deepest").asInt()).isEqualTo(96);
            });
            assertThat(a.sharing.depth(rank, prompt)).as("a's own prediction is router-kv's own path").isZero();

            a.stop();
            replicas.remove(a);
            within(Duration.ofSeconds(5), () -> {
                assertThat(b.sharing.depth(rank, prompt)).isZero();
                assertThat(c.sharing.depth(rank, prompt)).isZero();
            });
        } finally {
            close(node);
        }
    }

    /** Starts the node reader; {@code latest} holds the last state line it printed. */
    private static Process observer(java.util.concurrent.atomic.AtomicReference<String> latest) throws Exception {
        Process node = new ProcessBuilder("node", NpmFixtures.setDirectory("nats").resolve("replica-observer.mjs")
                .toString(), NATS.url(), "g").redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(node.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    latest.set(line);
                }
            } catch (java.io.IOException e) {
                latest.set("read failed: " + e);
            }
        }, "node-observer-reader");
        reader.setDaemon(true);
        reader.start();
        NpmFixtures.nodeModules("nats");
        return node;
    }

    private static void close(Process node) throws Exception {
        node.getOutputStream().close();
        if (!node.waitFor(10, TimeUnit.SECONDS)) {
            node.destroyForcibly();
        }
    }

    private static String key(SampleKey rank) {
        return rank.worker().namespace() + "/" + Long.toUnsignedString(rank.worker().instanceId()) + "/"
                + rank.dpRank();
    }
}
