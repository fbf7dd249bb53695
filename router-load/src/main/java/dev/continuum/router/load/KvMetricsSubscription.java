package dev.continuum.router.load;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.load.wire.ActiveLoad;
import dev.continuum.router.load.wire.ActiveLoadDecoder;
import dev.continuum.router.load.wire.Decoded;
import dev.continuum.router.load.wire.EventEnvelope;
import dev.continuum.router.load.wire.EventFrameDecoder;
import dev.continuum.router.load.zmtp.RefusedAddressException;
import dev.continuum.router.load.zmtp.Transport;
import dev.continuum.router.load.zmtp.ZmtpConnector;
import dev.continuum.router.load.zmtp.ZmtpEndpoint;
import dev.continuum.router.load.zmtp.ZmtpLimits;
import dev.continuum.router.load.zmtp.ZmtpListener;
import dev.continuum.router.load.zmtp.ZmtpMessage;
import dev.continuum.router.load.zmtp.ZmtpSubscriberHandler;
import dev.continuum.router.load.zmtp.ZmtpTarget;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One kv_metrics subscription: connects through its connector, runs the bounded ZMTP client, decodes each
 * message, checks identity and order, and applies samples to the store; reconnects with backoff.
 *
 * <p>Confined to one event loop: every field but {@link #state} is touched only there.
 *
 * <p><b>Order.</b> Sequences are checked per TCP stream: one at or below the highest seen is a duplicate;
 * one that skips ahead is a gap, after which the samples this publisher wrote are dropped before the new
 * one applies (a missed change, such as a busy worker going idle, must not keep a stale sample). The
 * samples are dropped on every connect for the same reason. A message whose envelope is good but whose
 * ActiveLoad is not still advances the sequence: it was received, so the next one is no gap.
 */
final class KvMetricsSubscription implements ZmtpListener {
    static final String FAMILY = "kv_metrics";
    private static final byte[] TOPIC = FAMILY.getBytes(StandardCharsets.US_ASCII);
    private static final Logger LOG = LoggerFactory.getLogger(KvMetricsSubscription.class);
    /** Keys this subscription wrote are pruned to those it still holds once the set grows past this. */
    private static final int WRITTEN_KEYS_PRUNE_AT = 4096;

    private final DynamoPublisher publisher;
    private final @Nullable ZmtpTarget target;
    private final Transport transport;
    private final @Nullable ZmtpConnector connector;
    private final EventLoop loop;
    private final Context context;
    private final EventFrameDecoder frames = EventFrameDecoder.kvMetrics();
    private final Set<SampleKey> writtenKeys = new HashSet<>();

    private volatile SubscriptionState state = SubscriptionState.PENDING;
    private @Nullable Channel channel;
    private @Nullable CompletableFuture<Channel> connecting;
    /** The wait for the connector to be able to reach the target (a broker covering its namespace). */
    private @Nullable CompletableFuture<Void> waiting;
    private @Nullable ScheduledFuture<?> retry;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private boolean stopping;
    private boolean dropOnStop;
    private int attempt;
    private long connectedAt;
    private boolean haveSequence;
    private long highestSequence;
    private boolean refusalLogged;
    /** Who carries the current connection (a broker's id), for the admin view; null for direct or none. */
    private volatile @Nullable String carrier;
    /** The current connection's handler, for the buffer-cost measurement. */
    private volatile @Nullable ZmtpSubscriberHandler handler;

    /** What every subscription of one supervisor shares. */
    record Context(ConcurrentLoadStore store, LoadMetrics metrics, ZmtpLimits limits, Backoff backoff,
                   java.util.random.RandomGenerator random) {
    }

    KvMetricsSubscription(DynamoPublisher publisher, @Nullable ZmtpConnector connector, Transport transport,
                          EventLoop loop, Context context) {
        this.publisher = publisher;
        this.transport = transport;
        this.connector = connector;
        this.loop = loop;
        this.context = context;
        this.target = ZmtpEndpoint.parse(publisher.address())
                .map(e -> new ZmtpTarget(publisher.namespace(), e, FAMILY)).orElse(null);
    }

    /** Bytes the current connection's ZMTP handler holds (0 without one). */
    int retainedBufferBytes() {
        ZmtpSubscriberHandler h = handler;
        return h == null ? 0 : h.retainedBufferBytes();
    }

    DynamoPublisher publisher() {
        return publisher;
    }

    SubscriptionState state() {
        return state;
    }

    Transport transport() {
        return transport;
    }

    SubscriptionView view() {
        SubscriptionState now = state;
        return new SubscriptionView(FAMILY, publisher.id().publisherId(), publisher.namespace(),
                publisher.component(), now, transport, now == SubscriptionState.CONNECTED ? carrier : null);
    }

    /** Starts connecting; with no connector (broker transport without the bus) it stays pending. */
    void start() {
        loop.execute(() -> {
            if (connector == null || target == null) {
                if (target == null) {
                    LOG.warn("kv_metrics publisher {} has an endpoint that is not tcp://host:port; not subscribing",
                            publisher.id());
                }
                return;
            }
            connect();
        });
    }

    private void connect() {
        retry = null;
        ZmtpConnector c = connector;
        ZmtpTarget t = target;
        if (stopping || c == null || t == null) {
            return;
        }
        CompletableFuture<Void> ready = c.reachable(t);
        if (!ready.isDone()) {
            // Nothing carries this target now (no broker covers its namespace): pending until one does.
            state = SubscriptionState.PENDING;
            waiting = ready;
            ready.whenCompleteAsync((v, error) -> {
                if (waiting == ready) {
                    waiting = null;
                    if (!stopping) {
                        dial(c, t);
                    }
                }
            }, loop);
            return;
        }
        dial(c, t);
    }

    private void dial(ZmtpConnector connector, ZmtpTarget target) {
        state = SubscriptionState.CONNECTING;
        ZmtpSubscriberHandler h = new ZmtpSubscriberHandler(context.limits(), TOPIC, this);
        handler = h;
        CompletableFuture<Channel> attemptFuture = connector.connect(target, loop, h);
        connecting = attemptFuture;
        attemptFuture.whenCompleteAsync((ch, error) -> {
            if (connecting == attemptFuture) {
                connecting = null;
            }
            if (error != null) {
                if (!stopping) {
                    failed(error);
                }
                return;
            }
            if (stopping) {
                ch.close();
                return;
            }
            channel = ch;
            carrier = connector.carrierOf(ch);
            ch.closeFuture().addListener(f -> loop.execute(() -> closed(ch)));
        }, loop);
    }

    private void failed(Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
        if (cause instanceof RefusedAddressException) {
            context.metrics().count(LoadEventResult.TRANSPORT_REFUSED);
            if (!refusalLogged) {
                refusalLogged = true;
                LOG.warn("kv_metrics publisher {}: {}", LogSafe.escape(publisher.id()),
                        LogSafe.escape(cause.getMessage()));
            }
        } else {
            LOG.debug("kv_metrics publisher {}: connect failed ({})", publisher.id(), cause.getClass().getSimpleName());
        }
        scheduleRetry(false);
    }

    private void closed(Channel ch) {
        if (channel != ch) {
            return;
        }
        channel = null;
        carrier = null;
        if (stopping) {
            finishStop();
            return;
        }
        boolean longSession = connectedAt != 0
                && context.store().now() - connectedAt >= context.backoff().resetAfter().toNanos();
        connectedAt = 0;
        // A lost carrier (a broker went away) is not the publisher's fault: retry at the floor, elsewhere.
        ZmtpConnector c = connector;
        scheduleRetry(longSession || (c != null && c.carrierLost(ch)));
    }

    private void scheduleRetry(boolean resetFloor) {
        if (resetFloor) {
            attempt = 0;
        }
        Duration delay = context.backoff().delay(attempt, context.random());
        attempt = Math.min(attempt + 1, 62);
        state = SubscriptionState.BACKOFF;
        retry = loop.schedule(this::connect, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void onConnected() {
        state = SubscriptionState.CONNECTED;
        connectedAt = context.store().now();
        haveSequence = false;
        dropSamples(); // whatever changed while we were away is unknown
    }

    @Override
    public void onMessage(ZmtpMessage message) {
        context.metrics().count(handle(message));
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
        LoadEventResult result = context.store().apply(publisher.namespace(), envelope.publisherId(), sequence, sample);
        if (result == LoadEventResult.APPLIED) {
            remember(new SampleKey(new dev.continuum.router.discovery.WorkerId(publisher.namespace(),
                    sample.workerId()), sample.dpRank()));
        }
        return result;
    }

    private void remember(SampleKey key) {
        if (writtenKeys.add(key) && writtenKeys.size() > WRITTEN_KEYS_PRUNE_AT) {
            long mine = publisher.id().publisherId();
            writtenKeys.removeIf(k -> {
                LoadSample held = context.store().latest(k.worker(), k.dpRank());
                return held == null || held.publisherId() != mine;
            });
        }
    }

    private void dropSamples() {
        context.store().dropPublisher(writtenKeys, publisher.id().publisherId());
        writtenKeys.clear();
    }

    @Override
    public void onRefused(String reason) {
        context.metrics().count(LoadEventResult.TRANSPORT_REFUSED);
        if (!refusalLogged) {
            refusalLogged = true;
            LOG.warn("kv_metrics publisher {}: refused ({}); reconnecting with backoff", LogSafe.escape(publisher.id()),
                    LogSafe.escape(reason));
        } else {
            LOG.debug("kv_metrics publisher {}: refused ({})", LogSafe.escape(publisher.id()), LogSafe.escape(reason));
        }
    }

    /**
     * Stops for good: no more reconnects; the channel closes. {@code dropSamples} also drops the samples
     * this publisher wrote (it left discovery; a transport restart keeps them, the next connect drops them).
     * The future completes once the channel is closed.
     */
    CompletableFuture<Void> stop(boolean dropSamples) {
        loop.execute(() -> {
            if (stopping) {
                return;
            }
            stopping = true;
            dropOnStop = dropSamples;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            CompletableFuture<Channel> pending = connecting;
            if (pending != null) {
                pending.cancel(true);
                connecting = null;
            }
            CompletableFuture<Void> wait = waiting;
            if (wait != null) {
                waiting = null;
                wait.cancel(false);
            }
            Channel ch = channel;
            if (ch != null) {
                ch.close();
            } else {
                finishStop();
            }
        });
        return stopped;
    }

    /** After the grace period: whatever is left is torn down now. */
    void abort() {
        loop.execute(() -> {
            Channel ch = channel;
            channel = null;
            if (ch != null) {
                ch.unsafe().closeForcibly();
            }
            finishStop();
        });
    }

    private void finishStop() {
        if (stopped.isDone()) {
            return;
        }
        if (dropOnStop) {
            dropSamples();
        }
        state = SubscriptionState.PENDING;
        stopped.complete(null);
    }
}
