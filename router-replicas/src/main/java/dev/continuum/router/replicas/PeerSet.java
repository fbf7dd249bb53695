package dev.continuum.router.replicas;

import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.ActiveSequences;
import dev.continuum.router.shim.SharedPredictions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The peers this replica follows, one {@link PeerPartition} each, and the snapshots it waits for. Owned by the
 * sync thread alone. Rules (docs/replicas.md, "Failure behaviour"):
 * <ul>
 *   <li>a peer first heard of, or heard of under a newer epoch (it restarted), is asked for a snapshot; until it
 *       arrives its batches wait in a bounded buffer;</li>
 *   <li>a batch whose number is not the next one is a gap: the partition is cleared and a snapshot asked for;</li>
 *   <li>a heartbeat naming a batch not applied is a gap too;</li>
 *   <li>a peer silent for {@code peer_timeout} is dropped with all it added.</li>
 * </ul>
 */
final class PeerSet {
    /** Batches held per peer while its snapshot is on its way. */
    static final int MAX_BUFFERED = 256;

    /** A snapshot being collected, chunk by chunk. */
    private static final class Pending {
        final long askedAt;
        SyncMessage @Nullable [] chunks;
        int received;

        Pending(long askedAt) {
            this.askedAt = askedAt;
        }
    }

    private final ActiveSequences view;
    private final ReplicaMetrics metrics;
    private final Consumer<String> askSnapshot;
    private final Consumer<SyncEvent.Bind> bindings;
    private volatile SharedPredictions predictions = SharedPredictions.NONE;
    private int lastNumber;
    private final Map<String, PeerPartition> peers = new HashMap<>();
    private final Map<String, List<SyncMessage>> buffered = new HashMap<>();
    private final Map<String, Pending> pending = new HashMap<>();

    PeerSet(ActiveSequences view, ReplicaMetrics metrics, Consumer<String> askSnapshot,
            Consumer<SyncEvent.Bind> bindings) {
        this.bindings = Objects.requireNonNull(bindings, "bindings");
        this.view = Objects.requireNonNull(view, "view");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.askSnapshot = Objects.requireNonNull(askSnapshot, "askSnapshot");
    }

    /** Where peers' predictions go (approximate mode); the sync thread reads it per event. */
    void predictions(SharedPredictions next) {
        this.predictions = Objects.requireNonNull(next, "predictions");
    }

    /** A batch or heartbeat from {@code m.replica()} (already checked against its subject). */
    void onStream(SyncMessage m, long now, int maxPeers) {
        PeerPartition p = peers.get(m.replica());
        if (p != null && m.epoch() < p.epoch) {
            metrics.dropped(SyncDrop.STALE);
            return;
        }
        if (p == null || m.epoch() != p.epoch) {
            if (p == null && peers.size() >= maxPeers) {
                metrics.dropped(SyncDrop.PEERS_LIMIT);
                return;
            }
            boolean restarted = p != null;
            if (p != null) {
                remove(p, ReplicaMetrics.Departure.RESTART);
            }
            lastNumber = lastNumber == Integer.MAX_VALUE ? 1 : lastNumber + 1;
            p = new PeerPartition(m.replica(), m.epoch(), now, lastNumber);
            peers.put(m.replica(), p);
            resync(p, now, restarted ? ReplicaMetrics.Resync.RESTART : ReplicaMetrics.Resync.JOIN);
        }
        p.heardAt = now;
        if (!p.synced()) {
            if (m.kind() == SyncMessage.Kind.BATCH) {
                buffer(p, m);
            }
            return;
        }
        if (m.kind() == SyncMessage.Kind.HEARTBEAT) {
            if (m.seq() > p.seq) {
                resync(p, now, ReplicaMetrics.Resync.GAP);
            }
            return;
        }
        if (m.seq() <= p.seq) {
            metrics.dropped(SyncDrop.STALE);
        } else if (m.seq() == p.seq + 1) {
            apply(p, m);
        } else {
            resync(p, now, ReplicaMetrics.Resync.GAP);
            buffer(p, m);
        }
    }

    /** A snapshot chunk that came back on this replica's inbox. */
    void onSnapshot(SyncMessage m, long now) {
        PeerPartition p = peers.get(m.replica());
        Pending w = pending.get(m.replica());
        if (p == null || w == null || p.epoch != m.epoch()) {
            metrics.dropped(SyncDrop.STALE);
            return;
        }
        SyncMessage[] chunks = w.chunks;
        if (chunks == null) {
            chunks = new SyncMessage[m.chunks()];
            w.chunks = chunks;
        }
        if (chunks.length != m.chunks() || chunks[m.chunk()] != null
                || (m.chunk() > 0 && chunks[0] != null && chunks[0].seq() != m.seq())) {
            metrics.dropped(SyncDrop.MALFORMED);
            return;
        }
        chunks[m.chunk()] = m;
        if (++w.received < chunks.length) {
            return;
        }
        pending.remove(m.replica());
        long seq = chunks[0].seq();
        for (SyncMessage c : chunks) {
            if (c.seq() != seq) {
                resync(p, now, ReplicaMetrics.Resync.RETRY);
                return;
            }
        }
        p.clear();
        for (SyncMessage c : chunks) {
            for (SyncEvent e : c.events()) {
                applyEvent(p, e);
            }
        }
        p.seq = seq;
        List<SyncMessage> waiting = buffered.remove(p.replica);
        if (waiting != null) {
            waiting.sort((a, b) -> Long.compare(a.seq(), b.seq()));
            for (SyncMessage b : waiting) {
                onStream(b, p.heardAt, Integer.MAX_VALUE);
            }
        }
        p.reconcile(view, false);
    }

    private void apply(PeerPartition p, SyncMessage m) {
        for (SyncEvent e : m.events()) {
            applyEvent(p, e);
        }
        p.seq = m.seq();
        p.reconcile(view, false);
    }

    private void applyEvent(PeerPartition p, SyncEvent e) {
        if (e instanceof SyncEvent.Bind b) {
            bindings.accept(b);
        } else if (e instanceof SyncEvent.Predict pr) {
            SampleKey rank = p.prefilling(pr.id());
            if (rank != null) {
                predictions.peerPredicted(p.number, rank, pr.stride(), pr.keys());
            }
        } else if (!p.apply(e)) {
            metrics.dropped(SyncDrop.OVER_BOUND);
        }
    }

    private void buffer(PeerPartition p, SyncMessage m) {
        List<SyncMessage> list = buffered.computeIfAbsent(p.replica, k -> new ArrayList<>());
        if (list.size() >= MAX_BUFFERED) {
            metrics.dropped(SyncDrop.OVER_BOUND);
            return;
        }
        list.add(m);
    }

    private void resync(PeerPartition p, long now, ReplicaMetrics.Resync reason) {
        p.clear();
        p.seq = -1;
        p.reconcile(view, false);
        pending.put(p.replica, new Pending(now));
        metrics.resync(reason);
        askSnapshot.accept(p.replica);
    }

    /**
     * Upkeep: drops peers silent past {@code timeoutNanos}, asks again for snapshots not complete after
     * {@code retryNanos}, and reconciles every partition with the candidate index when {@code all}.
     */
    void tick(long now, long timeoutNanos, long retryNanos, boolean all) {
        for (Iterator<PeerPartition> it = peers.values().iterator(); it.hasNext(); ) {
            PeerPartition p = it.next();
            if (now - p.heardAt > timeoutNanos) {
                it.remove();
                drop(p, ReplicaMetrics.Departure.TIMEOUT);
                continue;
            }
            Pending w = pending.get(p.replica);
            if (w != null && now - w.askedAt > retryNanos) {
                buffered.remove(p.replica);
                resync(p, now, ReplicaMetrics.Resync.RETRY);
            } else if (all) {
                p.reconcile(view, true);
            }
        }
    }

    /** Every peer resynchronises (NATS came back: what was published meanwhile was not seen). */
    void resyncAll(long now) {
        for (PeerPartition p : peers.values()) {
            buffered.remove(p.replica);
            resync(p, now, ReplicaMetrics.Resync.RECONNECT);
        }
    }

    /** Drops every peer and what it added (sync turned off, or this replica changed group or ID). */
    void clear() {
        for (PeerPartition p : List.copyOf(peers.values())) {
            remove(p, ReplicaMetrics.Departure.LEFT);
        }
    }

    private void remove(PeerPartition p, ReplicaMetrics.Departure reason) {
        peers.remove(p.replica);
        drop(p, reason);
    }

    private void drop(PeerPartition p, ReplicaMetrics.Departure reason) {
        p.release(view);
        predictions.forgetPeer(p.number);
        buffered.remove(p.replica);
        pending.remove(p.replica);
        metrics.departed(reason);
    }

    /** The peers by replica ID, for the admin view. */
    List<PeerView> views(long now) {
        List<PeerView> out = new ArrayList<>();
        for (PeerPartition p : new TreeMap<>(peers).values()) {
            PeerPartition.Totals t = p.totals();
            out.add(new PeerView(p.replica, p.epoch, p.seq, p.synced(), t.sequences(), t.prefillTokens(),
                    t.blocks(), Math.max(0, (now - p.heardAt) / 1_000_000)));
        }
        return List.copyOf(out);
    }
}
