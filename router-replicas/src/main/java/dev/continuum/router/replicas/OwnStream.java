package dev.continuum.router.replicas;

import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.DispatchedSequence;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.SequenceEnd;
import dev.continuum.router.shim.SequenceListener;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * This replica's own accounting as its peers see it: the sequence drainer's calls ({@link SequenceListener}) are
 * queued without blocking, then the sync thread folds them into its copy of the live sequences (what a snapshot
 * serves) and into numbered batches. If the queue overflows (the sync thread stalled) the next batch number skips
 * one, so every peer sees a gap and asks for a snapshot rather than apply a partial stream.
 */
final class OwnStream implements SequenceListener {
    /** Four events per tracked sequence (add, predict, first, end; the active sequences' own bound is 65,536). */
    static final int MAX_QUEUED = 4 * 65_536;
    /** Room kept in a message for one more event of the largest size (two ranks with 256-byte namespaces). */
    static final int EVENT_MARGIN = 640;

    private final ConcurrentLinkedQueue<SyncEvent> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private volatile boolean overflowed;
    private volatile SharedPredictions predictions = SharedPredictions.NONE;

    // Sync-thread owned.
    private final Map<Long, SyncEvent.Add> live = new LinkedHashMap<>();
    private final Map<Long, Boolean> first = new LinkedHashMap<>();
    private final SyncCodec.Writer writer = new SyncCodec.Writer();
    private String replica = "";
    private long epoch;
    /** The last batch number used (published or, while NATS is away, skipped). */
    private long seq;

    // ------------------------------------------------------------------ drainer side (never blocks)

    @Override
    public void dispatched(DispatchedSequence s) {
        offer(new SyncEvent.Add(s.id(), s.decode(), s.prefill(), s.prefillTokens(), s.blocks()));
        // The prefilling rank is the one predicted to hold the prompt (as the picker predicts it locally).
        SampleKey rank = s.prefill() != null ? s.prefill() : s.decode();
        BlockHashes hashes = s.prefill() != null ? s.prefillHashes() : s.decodeHashes();
        SharedPredictions.Sample sample = hashes == null ? null : predictions.sample(rank, hashes);
        if (sample != null) {
            offer(new SyncEvent.Predict(s.id(), sample.stride(), sample.keys()));
        }
    }

    /** What approximate-mode predictions are sampled through (replica sync's seam into the predicted cache). */
    void predictions(SharedPredictions next) {
        this.predictions = Objects.requireNonNull(next, "predictions");
    }

    @Override
    public void firstToken(long id) {
        offer(new SyncEvent.First(id));
    }

    @Override
    public void ended(long id, SequenceEnd reason) {
        offer(new SyncEvent.End(id));
    }

    /** A session bound (or rebound) by this replica's dispatcher; any thread, never blocks. */
    void bind(SyncEvent.Bind b) {
        offer(b);
    }

    private void offer(SyncEvent e) {
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            overflowed = true;
            return;
        }
        queue.offer(e);
    }

    // ------------------------------------------------------------------ sync thread

    /** A new identity (start, or a new group or replica ID): numbering restarts, the live copy is kept. */
    void identity(String replica, long epoch) {
        this.replica = Objects.requireNonNull(replica, "replica");
        this.epoch = epoch;
        this.seq = 0;
    }

    String replicaId() {
        return replica;
    }

    long seq() {
        return seq;
    }

    long epoch() {
        return epoch;
    }

    int live() {
        return live.size();
    }

    /**
     * Moves the queued events into batches of at most {@code maxEvents} and {@code maxBytes}, handing each finished
     * message to {@code send} with its batch number.
     */
    void drain(int maxEvents, int maxBytes, BiConsumer<Long, byte[]> send) {
        if (overflowed) {
            overflowed = false;
            seq++; // a deliberate gap: peers resynchronise from a snapshot
        }
        boolean open = false;
        for (SyncEvent e = queue.poll(); e != null; e = queue.poll()) {
            queued.decrementAndGet();
            if (!fold(e)) {
                continue;
            }
            if (!open) {
                writer.begin(SyncMessage.Kind.BATCH, replica, epoch, seq + 1, 0, 1);
                open = true;
            }
            writer.add(e);
            if (writer.events() >= maxEvents || writer.size() > maxBytes - EVENT_MARGIN) {
                send.accept(++seq, writer.finish());
                open = false;
            }
        }
        if (open) {
            send.accept(++seq, writer.finish());
        }
    }

    /** Applies {@code e} to the live copy; false when it names nothing live (nothing to tell peers). */
    private boolean fold(SyncEvent e) {
        if (e instanceof SyncEvent.Bind) {
            return true;
        }
        if (e instanceof SyncEvent.Predict) {
            return live.containsKey(e.id()); // not kept: predictions do not travel in snapshots
        }
        if (e instanceof SyncEvent.Add a) {
            live.put(a.id(), a);
            return true;
        }
        if (!live.containsKey(e.id())) {
            return false;
        }
        if (e instanceof SyncEvent.First) {
            first.put(e.id(), Boolean.TRUE);
        } else {
            live.remove(e.id());
            first.remove(e.id());
        }
        return true;
    }

    /** A heartbeat naming the last batch number. */
    byte[] heartbeat() {
        writer.begin(SyncMessage.Kind.HEARTBEAT, replica, epoch, seq, 0, 1);
        return writer.finish();
    }

    /**
     * The live sequences, and the session bindings this replica made that are still live, as snapshot chunks
     * consistent with batch {@link #seq}, each within {@code maxBytes}.
     */
    List<byte[]> snapshot(int maxBytes, List<SyncEvent.Bind> bindings) {
        List<SyncEvent> events = new ArrayList<>(live.size() * 2 + bindings.size());
        events.addAll(bindings);
        for (SyncEvent.Add a : live.values()) {
            events.add(a);
            if (first.containsKey(a.id())) {
                events.add(new SyncEvent.First(a.id()));
            }
        }
        // First pass: where each chunk ends; second: the chunks, now that their count is known.
        List<Integer> ends = new ArrayList<>();
        writer.begin(SyncMessage.Kind.SNAPSHOT, replica, epoch, seq, 0, 1);
        for (int i = 0; i < events.size(); i++) {
            writer.add(events.get(i));
            if (writer.events() >= SyncCodec.MAX_EVENTS || writer.size() > maxBytes - EVENT_MARGIN) {
                ends.add(i + 1);
                writer.begin(SyncMessage.Kind.SNAPSHOT, replica, epoch, seq, 0, 1);
            }
        }
        if (ends.isEmpty() || ends.get(ends.size() - 1) != events.size()) {
            ends.add(events.size());
        }
        List<byte[]> chunks = new ArrayList<>(ends.size());
        int from = 0;
        for (int c = 0; c < ends.size(); c++) {
            writer.begin(SyncMessage.Kind.SNAPSHOT, replica, epoch, seq, c, ends.size());
            for (int i = from; i < ends.get(c); i++) {
                writer.add(events.get(i));
            }
            chunks.add(writer.finish());
            from = ends.get(c);
        }
        return chunks;
    }

    /** A request for a peer's snapshot. */
    byte[] snapshotRequest() {
        writer.begin(SyncMessage.Kind.SNAPSHOT_REQUEST, replica, epoch, seq, 0, 1);
        return writer.finish();
    }
}
