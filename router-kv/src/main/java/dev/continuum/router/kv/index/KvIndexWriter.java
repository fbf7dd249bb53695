package dev.continuum.router.kv.index;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.events.KvEventIngest;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The KV index's single writer: {@link KvEventIngest} on the subscriptions' side, one thread applying
 * everything in order on the other, and the {@link RadixIndex} it writes (the picker reads it through
 * {@link #index()}).
 *
 * <p>{@link #onMessage} runs on the caller's thread: it checks the frames and the envelope (upstream's
 * event-plane framing, the payload at most 1 MiB), copies the payload, and offers it to a bounded queue
 * ({@value #QUEUE_MESSAGES} messages and {@value #QUEUE_BYTES} bytes); a full queue drops the message
 * ({@code queue_full}). Fleet views and subscription closures never queue behind messages: the writer takes
 * the latest fleet view and the pending closures before each message, so a departed worker's events are
 * refused from the first message after its departure was announced. Every queued message carries a sequence
 * number and every closure the sequence it was announced at, so a closed subscription's messages still in the
 * queue are dropped instead of refilling the ranks the closure cleared (a subscription delivers its messages
 * and its closure on one thread, so what it queued before closing numbers at most the closure's sequence).
 */
public final class KvIndexWriter extends StartStopSupport implements KvEventIngest {
    private static final Logger LOG = LoggerFactory.getLogger(KvIndexWriter.class);
    /** kv-events payloads above this are refused before parsing: 128 events or 8,192 blocks fit. */
    public static final int MAX_PAYLOAD_BYTES = 1024 * 1024;
    static final int QUEUE_MESSAGES = 1024;
    static final long QUEUE_BYTES = 32L * 1024 * 1024;

    private record Queued(PublisherId publisher, byte[] payload, long seq) {
    }

    private record Closure(PublisherId publisher, long seq) {
    }

    private record Fleet(Map<WorkerId, DpRanks> live, long generation) {
    }

    /** Offered when control work arrives, so an idle writer wakes; never counted against the bounds. */
    private static final Queued WAKE = new Queued(new PublisherId("", 0), new byte[0], 0);

    private final RadixIndex index;
    private final KvIndexMetrics metrics;
    private final PredictedMetrics predictedMetrics;
    private final PredictedBlocks predicted;
    private final PredictedOverlap overlap;
    private final IndexApplier applier;
    private final EventFrameDecoder frames = new EventFrameDecoder("kv-events", MAX_PAYLOAD_BYTES);
    private final ArrayBlockingQueue<Queued> queue = new ArrayBlockingQueue<>(QUEUE_MESSAGES);
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicReference<@Nullable Fleet> fleet = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Closure> closed = new ConcurrentLinkedQueue<>();
    /** The sequence of the last message offered to the queue. */
    private final AtomicLong offered = new AtomicLong();
    /**
     * Writer thread only: closed publishers whose pre-closure messages may still be queued, with the closure's
     * sequence; an entry goes once the writer has taken a message numbered past it (nothing older is queued).
     */
    private final Map<PublisherId, Long> drainingClosed = new HashMap<>();
    private volatile boolean running;
    private @Nullable Thread thread;
    private final AtomicLong processed = new AtomicLong();

    public KvIndexWriter(MeterRegistry registry, IndexLimits limits) {
        this(registry, limits, System::nanoTime);
    }

    /** @param clock the predicted cache's clock (its TTLs), nanoseconds */
    public KvIndexWriter(MeterRegistry registry, IndexLimits limits, java.util.function.LongSupplier clock) {
        this.index = new RadixIndex(limits);
        this.metrics = new KvIndexMetrics(registry, index);
        this.predictedMetrics = new PredictedMetrics(registry);
        this.predicted = new PredictedBlocks(index.rootPath(), clock, predictedMetrics);
        predictedMetrics.watch(predicted);
        this.overlap = new PredictedOverlap(index, predicted);
        this.applier = new IndexApplier(index, metrics, predicted);
    }

    /** The router's predicted cache: the picker's dispatches go in, stored kv-events and departures take out. */
    public PredictedBlocks predicted() {
        return predicted;
    }

    /** The KV-aware picker's read side: per rank, the deeper of the index and the predicted cache. */
    public PredictedOverlap overlap() {
        return overlap;
    }

    /** The read side, for the KV-aware picker. */
    public RadixIndex index() {
        return index;
    }

    public KvIndexMetrics metrics() {
        return metrics;
    }

    /** Messages, fleet views and closures the writer has finished with (tests wait on it). */
    public long processed() {
        return processed.get();
    }

    @Override
    public void onMessage(PublisherId publisher, ZmtpMessage message) {
        Decoded<EventEnvelope> decoded = frames.decode(message);
        if (decoded instanceof Decoded.Dropped<EventEnvelope> d) {
            metrics.count(KvEventResult.of(d.reason()));
            return;
        }
        EventEnvelope envelope = ((Decoded.Ok<EventEnvelope>) decoded).value();
        if (envelope.publisherId() != publisher.publisherId()) {
            metrics.count(KvEventResult.IDENTITY_MISMATCH);
            return;
        }
        byte[] payload = envelope.payload();
        if (queuedBytes.addAndGet(payload.length) > QUEUE_BYTES) {
            queuedBytes.addAndGet(-payload.length);
            metrics.count(KvEventResult.QUEUE_FULL);
            return;
        }
        if (!queue.offer(new Queued(publisher, payload, offered.incrementAndGet()))) {
            queuedBytes.addAndGet(-payload.length);
            metrics.count(KvEventResult.QUEUE_FULL);
        }
    }

    @Override
    public void onSubscriptionClosed(PublisherId publisher) {
        closed.add(new Closure(publisher, offered.get()));
        queue.offer(WAKE);
    }

    @Override
    public void onFleet(Map<WorkerId, DpRanks> liveWorkers, long generation) {
        Fleet next = new Fleet(Map.copyOf(liveWorkers), generation);
        fleet.accumulateAndGet(next, (held, offered) -> held == null || offered.generation > held.generation
                ? offered : held);
        queue.offer(WAKE);
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        running = true;
        Thread t = new Thread(this::run, "kv-index-writer");
        t.setDaemon(true);
        thread = t;
        t.start();
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        running = false;
        Thread t = thread;
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (t == null) {
            metrics.close();
            predictedMetrics.close();
            done.complete(null);
            return done;
        }
        t.interrupt();
        Thread joiner = new Thread(() -> {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            metrics.close();
            predictedMetrics.close();
            done.complete(null);
        }, "kv-index-writer-stop");
        joiner.setDaemon(true);
        joiner.start();
        return done;
    }

    private void run() {
        while (running) {
            try {
                control();
                Queued item = queue.poll(100, TimeUnit.MILLISECONDS);
                if (item == null || item == WAKE) {
                    continue;
                }
                queuedBytes.addAndGet(-item.payload().length);
                control();
                if (!queuedBeforeItsClosure(item)) {
                    applier.applyPayload(item.publisher(), item.payload());
                }
                processed.incrementAndGet();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // A bug, never input: the decoder does not throw. Keep indexing the rest of the fleet.
                LOG.error("kv index writer: an event failed to apply", e);
            }
        }
    }

    private void control() {
        Fleet f = fleet.getAndSet(null);
        if (f != null) {
            applier.applyFleet(f.live(), f.generation());
            processed.incrementAndGet();
        }
        for (Closure c; (c = closed.poll()) != null; ) {
            applier.closeSource(c.publisher());
            drainingClosed.put(c.publisher(), c.seq());
            processed.incrementAndGet();
        }
    }

    /** Whether {@code item} was queued by a subscription that closed since; forgets closures left behind. */
    private boolean queuedBeforeItsClosure(Queued item) {
        if (drainingClosed.isEmpty()) {
            return false;
        }
        Long closedAt = drainingClosed.get(item.publisher());
        boolean stale = closedAt != null && item.seq() <= closedAt;
        drainingClosed.values().removeIf(seq -> seq < item.seq());
        return stale;
    }
}
