package dev.continuum.router.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.ActiveSequences;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.PickRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A peer's stream applied to a real picker's view without NATS: in order it counts, a gap or a restart clears the
 * peer's part and asks for a snapshot, the snapshot and the batches after it restore it, a silent peer leaves
 * exactly what it added, and stale input is dropped, counted.
 */
class PeerSetTest {
    private static final String NS = "dynamo";
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final SampleKey RANK = new SampleKey(new WorkerId(NS, 1), 0);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final ReplicaMetrics metrics = new ReplicaMetrics(meters, null);
    private final List<String> asked = new ArrayList<>();
    private final ActiveSequences view = view();
    private final List<SyncEvent.Bind> bound = new ArrayList<>();
    private final PeerSet peers = new PeerSet(view, metrics, asked::add, bound::add);

    private ActiveSequences view() {
        MutableDynamoRegistry fleet = MutableDynamoRegistry.create();
        ModelCard card = new ModelCard(MODEL, null, false, 16, ModelCard.WorkerCapacity.UNKNOWN, null, null, null,
                ModelCard.CardArtifacts.NONE, null, "{}");
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
        fleet.reconfigure(true, DiscoverySourceKind.FILE, List.of(NS), FleetView.of(List.of(new DynamoWorker(
                new WorkerId(NS, 1), WorkerRole.AGGREGATED, "backend", "generate", card, t0, t0)), List.of()));
        LoadBasedPicking picking = LoadBasedPicking.create(LoadSupervisor.builder(meters).build().store(),
                System::nanoTime, meters, fleet);
        // One pick builds the candidate index: the rank has counters peers can add to.
        picking.picker().pick(fleet.snapshot(), new PickRequest(MODEL, Set.of(NS), 10)).dispatch().ended();
        return picking.activeSequences();
    }

    private static SyncMessage msg(SyncMessage.Kind kind, long epoch, long seq, SyncEvent... events) {
        SyncCodec.Writer w = new SyncCodec.Writer();
        w.begin(kind, "p", epoch, seq, 0, 1);
        for (SyncEvent e : events) {
            w.add(e);
        }
        return SyncCodec.decode(w.finish());
    }

    private static SyncEvent add(long id) {
        return new SyncEvent.Add(id, RANK, null, 100, 4);
    }

    private void joinAt(long epoch, long seq, SyncEvent... live) {
        peers.onStream(msg(SyncMessage.Kind.HEARTBEAT, epoch, seq), 0, 8);
        peers.onSnapshot(msg(SyncMessage.Kind.SNAPSHOT, epoch, seq, live), 0);
    }

    @Test
    void appliesInOrderAndResynchronisesOnAGap() {
        joinAt(1, 0);
        assertThat(asked).containsExactly("p");
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 1, add(1), add(2)), 0, 8);
        assertThat(view.activeSequences(RANK)).isEqualTo(2);
        assertThat(view.activePrefillTokens(RANK)).isEqualTo(200);
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 2, new SyncEvent.First(1), new SyncEvent.End(2)), 0, 8);
        assertThat(view.activeSequences(RANK)).isEqualTo(1);
        assertThat(view.activePrefillTokens(RANK)).isZero();
        assertThat(view.activeBlocks(RANK)).isEqualTo(4);

        // Batch 3 lost: batch 4 clears the part and asks again; nothing counts until the snapshot is in.
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 4, add(4)), 0, 8);
        assertThat(asked).containsExactly("p", "p");
        assertThat(view.activeSequences(RANK)).isZero();
        // The snapshot is at batch 3 (sequences 1, first token seen, and 3); the buffered batch 4 follows it.
        peers.onSnapshot(msg(SyncMessage.Kind.SNAPSHOT, 1, 3, add(1), new SyncEvent.First(1), add(3)), 0);
        assertThat(view.activeSequences(RANK)).isEqualTo(3);
        assertThat(view.activePrefillTokens(RANK)).isEqualTo(200);
        assertThat(metrics.resyncCount(ReplicaMetrics.Resync.GAP)).isEqualTo(1);

        // A bind event goes to the session table, not the partition; a snapshot carries the peer's bindings too.
        SyncEvent.Bind bind = new SyncEvent.Bind("s-1", RANK, 60_000);
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 5, bind), 0, 8);
        assertThat(bound).containsExactly(bind);
        assertThat(view.activeSequences(RANK)).isEqualTo(3);

        // A replayed batch is stale, never applied twice.
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 4, add(4)), 0, 8);
        assertThat(view.activeSequences(RANK)).isEqualTo(3);
        assertThat(metrics.droppedCount(SyncDrop.STALE)).isEqualTo(1);
        assertThat(bound).hasSize(1);
    }

    @Test
    void aRestartOrASilenceTakesBackExactlyThePeersPart() {
        joinAt(1, 0);
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 1, add(1), add(2)), 0, 8);
        assertThat(view.activeSequences(RANK)).isEqualTo(2);

        // A newer epoch: the old part leaves at once, the new one comes from its snapshot.
        joinAt(2, 5, add(9));
        assertThat(view.activeSequences(RANK)).isEqualTo(1);
        assertThat(metrics.departureCount(ReplicaMetrics.Departure.RESTART)).isEqualTo(1);
        // The old epoch is stale now.
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 2, add(3)), 0, 8);
        assertThat(view.activeSequences(RANK)).isEqualTo(1);

        peers.tick(1_000, 999, 999, false);
        assertThat(view.activeSequences(RANK)).isZero();
        assertThat(view.activePrefillTokens(RANK)).isZero();
        assertThat(view.activeBlocks(RANK)).isZero();
        assertThat(peers.views(1_000)).isEmpty();
    }

    /** Records the seam's calls (router-kv's overlay behind it is tested there and end to end). */
    private static final class Recorded implements SharedPredictions {
        final List<String> calls = new ArrayList<>();

        @Override
        public SharedPredictions.Sample sample(SampleKey rank, BlockHashes hashes) {
            return null;
        }

        @Override
        public void peerPredicted(int peer, SampleKey rank, int stride, long[] keys) {
            calls.add("predicted " + peer + " " + rank.worker().instanceId() + " " + stride + " " + keys.length);
        }

        @Override
        public void forgetPeer(int peer) {
            calls.add("forget " + peer);
        }
    }

    @Test
    void predictionsGoToThePrefillingRankUnderThePeersPartitionAndLeaveWithIt() {
        Recorded seam = new Recorded();
        peers.predictions(seam);
        SampleKey prefill = new SampleKey(new WorkerId(NS, 2), 0);
        joinAt(1, 0);
        peers.onStream(msg(SyncMessage.Kind.BATCH, 1, 1, add(1), new SyncEvent.Predict(1, 16, new long[] {5, 6}),
                new SyncEvent.Add(2, RANK, prefill, 100, 4), new SyncEvent.Predict(2, 32, new long[] {7}),
                new SyncEvent.Predict(99, 16, new long[] {8})), 0, 8);
        assertThat(seam.calls).as("the decode rank prefills alone, the pair's prefill rank; an unknown id: nothing")
                .containsExactly("predicted 1 1 16 2", "predicted 1 2 32 1");
        assertThat(view.activeSequences(RANK)).as("a predict event is no sequence").isEqualTo(2);

        joinAt(2, 0); // restarted: its old partition's predictions go, the new one has its own number
        peers.onStream(msg(SyncMessage.Kind.BATCH, 2, 1, add(1), new SyncEvent.Predict(1, 16, new long[] {5})),
                0, 8);
        peers.tick(1_000, 999, 999, false);
        assertThat(seam.calls).containsSubsequence("forget 1", "predicted 2 1 16 1", "forget 2");
    }

    @Test
    void peersBeyondTheBoundAreDroppedCounted() {
        peers.onStream(msg(SyncMessage.Kind.HEARTBEAT, 1, 0), 0, 0);
        assertThat(peers.views(0)).isEmpty();
        assertThat(metrics.droppedCount(SyncDrop.PEERS_LIMIT)).isEqualTo(1);
    }
}
