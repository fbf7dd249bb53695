package dev.continuum.router.replicas;

import dev.continuum.router.shim.ActiveSequences;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.SequenceListener;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * One replica's accounting piped into one peer's view in process, without NATS: the sender's half and the
 * receiver's half of {@link ReplicaSync} (batching and encoding, decoding, partition and counters) on the calling
 * thread. What the sync-cost benchmark measures, per routed request, and a check of the whole path in tests.
 */
public final class SyncPipe {
    private final OwnStream sender = new OwnStream();
    private final PeerSet receiver;
    private final int maxEvents;
    private final int maxBytes;
    private long bytes;
    private long messages;

    /**
     * @param peerView the receiving replica's active sequences (its picker's view)
     * @param registry where the receiver's replica meters go
     */
    public SyncPipe(ActiveSequences peerView, MeterRegistry registry, int maxEvents, int maxBytes) {
        ReplicaMetrics metrics = new ReplicaMetrics(registry, null);
        this.receiver = new PeerSet(Objects.requireNonNull(peerView, "peerView"), metrics, peer -> {
        }, bind -> {
        });
        this.maxEvents = maxEvents;
        this.maxBytes = maxBytes;
        sender.identity("sender", 1);
        // The receiver starts from an empty snapshot at batch 0, as after a join.
        SyncCodec.Writer w = new SyncCodec.Writer();
        w.begin(SyncMessage.Kind.HEARTBEAT, "sender", 1, 0, 0, 1);
        receiver.onStream(SyncCodec.decode(w.finish()), 0, 1);
        w.begin(SyncMessage.Kind.SNAPSHOT, "sender", 1, 0, 0, 1);
        receiver.onSnapshot(SyncCodec.decode(w.finish()), 0);
    }

    /** Samples the sender's predictions through {@code sender}, hands the peer's to {@code receiver}. */
    public SyncPipe predictions(SharedPredictions sender, SharedPredictions receiver) {
        this.sender.predictions(sender);
        this.receiver.predictions(receiver);
        return this;
    }

    /** Register this with the sending replica's {@link ActiveSequences#listen}. */
    public SequenceListener sender() {
        return sender;
    }

    /** Encodes what the sender queued into batches, decodes and applies them to the peer view; the bytes moved. */
    public long pump() {
        long before = bytes;
        sender.drain(maxEvents, maxBytes, (seq, data) -> {
            bytes += data.length;
            messages++;
            receiver.onStream(SyncCodec.decode(data), 0, 1);
        });
        return bytes - before;
    }

    public long bytes() {
        return bytes;
    }

    public long messages() {
        return messages;
    }
}
