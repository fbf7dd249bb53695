package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.eventplane.ChannelReceiver;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.wire.ActiveLoad;
import dev.continuum.router.load.wire.ActiveLoadDecoder;
import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one kv_metrics subscription does with its messages ({@link ChannelSubscription} runs the connection):
 * decodes each, checks identity and order, and applies samples to the store.
 *
 * <p>Confined to the subscription's event loop.
 *
 * <p><b>Order.</b> Sequences are checked per TCP stream: one at or below the highest seen is a duplicate;
 * one that skips ahead is a gap, after which the samples this publisher wrote are dropped before the new
 * one applies (a missed change, such as a busy worker going idle, must not keep a stale sample). The
 * samples are dropped on every connect for the same reason. A message whose envelope is good but whose
 * ActiveLoad is not still advances the sequence: it was received, so the next one is no gap.
 */
final class KvMetricsSubscription implements ChannelReceiver {
    static final String FAMILY = "kv_metrics";
    private static final Logger LOG = LoggerFactory.getLogger(KvMetricsSubscription.class);
    /** Keys this subscription wrote are pruned to those it still holds once the set grows past this. */
    private static final int WRITTEN_KEYS_PRUNE_AT = 4096;

    private final DynamoPublisher publisher;
    private final ConcurrentLoadStore store;
    private final LoadMetrics metrics;
    private final EventFrameDecoder frames = EventFrameDecoder.kvMetrics();
    private final Set<SampleKey> writtenKeys = new HashSet<>();
    private boolean haveSequence;
    private long highestSequence;

    KvMetricsSubscription(DynamoPublisher publisher, ConcurrentLoadStore store, LoadMetrics metrics) {
        this.publisher = publisher;
        this.store = store;
        this.metrics = metrics;
    }

    @Override
    public void onConnected() {
        haveSequence = false;
        dropSamples(); // whatever changed while we were away is unknown
    }

    @Override
    public void onMessage(ZmtpMessage message) {
        metrics.count(handle(message));
    }

    @Override
    public void onTransportRefused() {
        metrics.count(LoadEventResult.TRANSPORT_REFUSED);
    }

    /** A departed publisher's samples go with it; a restart keeps them until the next connect drops them. */
    @Override
    public void onStopped(boolean departed) {
        if (departed) {
            dropSamples();
        }
    }

    private LoadEventResult handle(ZmtpMessage message) {
        Decoded<EventEnvelope> decoded = frames.decode(message);
        if (decoded instanceof Decoded.Dropped<EventEnvelope> d) {
            return LoadEventResult.of(d.reason());
        }
        EventEnvelope envelope = ((Decoded.Ok<EventEnvelope>) decoded).value();
        if (envelope.publisherId() != publisher.id().publisherId()) {
            return LoadEventResult.IDENTITY_MISMATCH;
        }
        long sequence = envelope.sequence();
        if (haveSequence && Long.compareUnsigned(sequence, highestSequence) <= 0) {
            return LoadEventResult.DUPLICATE;
        }
        if (haveSequence && sequence != highestSequence + 1) {
            LOG.debug("kv_metrics publisher {}: sequence gap, dropping its samples", publisher.id());
            dropSamples();
        }
        haveSequence = true;
        highestSequence = sequence;
        Decoded<ActiveLoad> load = ActiveLoadDecoder.decode(envelope.payload());
        if (load instanceof Decoded.Dropped<ActiveLoad> d) {
            return LoadEventResult.of(d.reason());
        }
        ActiveLoad sample = ((Decoded.Ok<ActiveLoad>) load).value();
        LoadEventResult result = store.apply(publisher.namespace(), envelope.publisherId(), sequence, sample);
        if (result == LoadEventResult.APPLIED) {
            remember(new SampleKey(new WorkerId(publisher.namespace(), sample.workerId()), sample.dpRank()));
        }
        return result;
    }

    private void remember(SampleKey key) {
        if (writtenKeys.add(key) && writtenKeys.size() > WRITTEN_KEYS_PRUNE_AT) {
            long mine = publisher.id().publisherId();
            writtenKeys.removeIf(k -> {
                LoadSample held = store.latest(k.worker(), k.dpRank());
                return held == null || held.publisherId() != mine;
            });
        }
    }

    private void dropSamples() {
        store.dropPublisher(writtenKeys, publisher.id().publisherId());
        writtenKeys.clear();
    }
}
