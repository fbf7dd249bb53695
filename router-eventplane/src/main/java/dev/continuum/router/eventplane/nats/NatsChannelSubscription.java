package dev.continuum.router.eventplane.nats;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.eventplane.ChannelReceiver;
import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Subscription;
import io.netty.channel.EventLoop;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One event channel on the {@code Nats} transport: subscribes to {@code {subject_prefix}.{topic}} on the shared
 * {@link NatsConnection} (the exact subject, never a wildcard) and hands every message to the family's
 * {@link ChannelReceiver} on the subscription's event loop, laid out as the ZMQ transport's four parts
 * ({@link NatsFrames}), so bounds, identity gate, dedup, cursors and gap rules are the family's own.
 *
 * <p>A message above the family's frame limit is dropped before it is copied, and at most
 * {@link #MAX_QUEUED} messages wait for the event loop; more are dropped and counted, never queued without bound.
 * A connection loss is a disconnect for the receiver and the reconnect a new connect (the gap rules apply); a
 * move to a new connection (a settings change) subscribes there before the old one closes, and the
 * receiver's dedup drops what both delivered.
 */
public final class NatsChannelSubscription implements NatsTap {
    private static final Logger LOG = LoggerFactory.getLogger(NatsChannelSubscription.class);
    /** Messages handed to the event loop and not yet delivered. */
    public static final int MAX_QUEUED = 4096;
    private static final java.time.Duration FLUSH_TIMEOUT = java.time.Duration.ofSeconds(2);

    private final DynamoPublisher publisher;
    private final String subject;
    private final NatsConnection nats;
    private final EventLoop loop;
    private final ChannelSubscription.Settings settings;
    private final ChannelReceiver receiver;
    private final AtomicInteger queued = new AtomicInteger();
    private final long publisherId;
    private final CompletableFuture<Void> stoppedFuture = new CompletableFuture<>();
    private volatile SubscriptionState state = SubscriptionState.PENDING;
    private volatile boolean stopping;
    /** The subscription on the newest connection's dispatcher; older ones close with their connection. */
    private volatile @Nullable Subscription subscription;
    /** Confined to the loop: whether the receiver was told of a connection it was not yet told has ended. */
    private boolean receiverConnected;

    public NatsChannelSubscription(DynamoPublisher publisher, NatsConnection nats, EventLoop loop,
            ChannelSubscription.Settings settings, ChannelReceiver receiver) {
        this.publisher = publisher;
        this.subject = subject(publisher, settings.family());
        this.publisherId = publisher.id().publisherId();
        this.nats = nats;
        this.loop = loop;
        this.settings = settings;
        this.receiver = receiver;
    }

    /** {@code {subject_prefix}.{topic}} of a NATS publisher. */
    public static String subject(DynamoPublisher publisher, String topic) {
        return publisher.natsSubjectPrefix() + "." + topic;
    }

    public DynamoPublisher publisher() {
        return publisher;
    }

    public SubscriptionState state() {
        return state;
    }

    public ChannelReceiver receiver() {
        return receiver;
    }

    public SubscriptionView view() {
        return new SubscriptionView(settings.family(), publisher.id().publisherId(), publisher.namespace(),
                publisher.component(), state, Transport.NATS);
    }

    /** Subscribes on the shared connection now or once it is up; pending until then. */
    public void start() {
        nats.register(this);
    }

    @Override
    public synchronized void attach(Connection connection, Dispatcher dispatcher) {
        if (stopping) {
            return;
        }
        Subscription before = subscription;
        subscription = dispatcher.subscribe(subject, this::onNatsMessage);
        try {
            // A round trip, so "connected" means the server has the subscription and delivers from now on.
            connection.flush(FLUSH_TIMEOUT);
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.debug("NATS {} subscription {}: the subscribe was not confirmed in {}", settings.family(),
                    publisher.id(), FLUSH_TIMEOUT);
        }
        state = SubscriptionState.CONNECTED;
        if (before != null) {
            // A settings change: the old connection closes right after every tap moved; the receiver's dedup
            // drops the messages both subscriptions delivered meanwhile.
            return;
        }
        loop.execute(() -> {
            if (!stopping && !receiverConnected) {
                receiverConnected = true;
                receiver.onConnected();
            }
        });
    }

    @Override
    public void lost() {
        state = SubscriptionState.BACKOFF;
        loop.execute(() -> {
            if (receiverConnected) {
                receiverConnected = false;
                receiver.onDisconnected();
            }
        });
    }

    @Override
    public void resumed() {
        if (stopping || subscription == null) {
            return;
        }
        state = SubscriptionState.CONNECTED;
        loop.execute(() -> {
            if (!stopping && !receiverConnected) {
                receiverConnected = true;
                receiver.onConnected();
            }
        });
    }

    @Override
    public synchronized void detached() {
        subscription = null;
        state = SubscriptionState.PENDING;
        lost();
    }

    private void onNatsMessage(Message m) {
        if (stopping) {
            return;
        }
        byte[] data = m.getData();
        if (data == null || data.length > settings.limits().maxFrameBytes()) {
            nats.dropped(NatsDrop.OVERSIZED);
            return;
        }
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            nats.dropped(NatsDrop.BACKLOG);
            return;
        }
        ZmtpMessage frames = NatsFrames.of(settings.family(), data, publisherId);
        if (frames == null) {
            queued.decrementAndGet();
            nats.dropped(NatsDrop.MALFORMED);
            return;
        }
        if (frames == NatsFrames.ANOTHER_PUBLISHER) {
            // A namespace-scoped subject carries every publisher's messages: each subscription keeps its own.
            queued.decrementAndGet();
            return;
        }
        loop.execute(() -> {
            queued.decrementAndGet();
            if (!stopping) {
                receiver.onMessage(frames);
            }
        });
    }

    /**
     * Stops for good: unsubscribes and leaves the shared connection. {@code departed}: the publisher left
     * discovery (the receiver drops what it delivered). Completes once the receiver has been told.
     */
    public synchronized CompletableFuture<Void> stop(boolean departed) {
        if (!stopping) {
            stopping = true;
            nats.unregister(this);
            Subscription s = subscription;
            subscription = null;
            if (s != null) {
                try {
                    s.getDispatcher().unsubscribe(s);
                } catch (IllegalStateException e) {
                    LOG.debug("NATS {} subscription {}: {}", settings.family(), publisher.id(),
                            LogSafe.escape(e.getMessage()));
                }
            }
            loop.execute(() -> {
                receiver.onStopped(departed);
                state = SubscriptionState.PENDING;
                stoppedFuture.complete(null);
            });
        }
        return stoppedFuture;
    }
}
