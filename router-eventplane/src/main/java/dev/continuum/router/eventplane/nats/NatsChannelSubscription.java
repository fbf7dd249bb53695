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
import io.nats.client.JetStreamApiException;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
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
    private static final String KV_EVENTS = "kv-events";
    /** A durable consumer without a subscriber for this long is deleted by the server. */
    static final java.time.Duration DURABLE_IDLE_LIMIT = java.time.Duration.ofHours(1);

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
    /** Whether this process already recreated its durable consumer (under the subscription's monitor). */
    private boolean consumerReset;

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
        NatsJetStreamConfig js = KV_EVENTS.equals(settings.family()) ? nats.jetstream() : null;
        if (js == null) {
            subscription = dispatcher.subscribe(subject, this::onNatsMessage);
        } else {
            if (before != null) {
                // A durable push consumer takes one subscription at a time: leave the old connection's first.
                unsubscribeQuietly(before);
            }
            try {
                subscription = jetStreamSubscription(connection, dispatcher, js);
            } catch (IOException | JetStreamApiException | IllegalStateException | IllegalArgumentException e) {
                LOG.warn("NATS kv-events publisher {}: cannot read JetStream stream {} ({}); not subscribed until "
                        + "the connection or the settings change", publisher.id(), js.kvEventsStream(),
                        LogSafe.escape(e.getMessage()));
                subscription = null;
                state = SubscriptionState.PENDING;
                return;
            }
        }
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

    /**
     * A durable consumer of the fleet's JetStream stream, filtered to this channel's subject, acknowledged message
     * by message once the family has it, at most {@link #MAX_QUEUED} unacknowledged. The first time in this
     * process the durable is recreated from the stream's start: the index lives in memory, so after a router
     * restart it is rebuilt from every retained event rather than resumed past them. Within the process the
     * durable keeps its position across connection losses, so nothing published meanwhile is missed.
     */
    private Subscription jetStreamSubscription(Connection connection, Dispatcher dispatcher, NatsJetStreamConfig js)
            throws IOException, JetStreamApiException {
        String durable = js.durable(publisherId);
        if (!consumerReset) {
            try {
                connection.jetStreamManagement().deleteConsumer(js.kvEventsStream(), durable);
            } catch (JetStreamApiException e) {
                LOG.debug("NATS durable {} not deleted ({})", durable, LogSafe.escape(e.getMessage()));
            }
            consumerReset = true;
        }
        ConsumerConfiguration consumer = ConsumerConfiguration.builder().durable(durable).filterSubject(subject)
                .deliverPolicy(DeliverPolicy.All).ackPolicy(AckPolicy.Explicit).maxAckPending(MAX_QUEUED)
                // dynamo.nats.jetstream.ack_wait: an acknowledgement lost with a stopping connection would hold its
                // message back for the server's default 30 s; redelivered sooner, a message applied already is
                // dropped by the kv-events cursor.
                .ackWait(js.ackWait())
                // Publisher IDs change per incarnation: a durable nobody reads is removed by the server.
                .inactiveThreshold(DURABLE_IDLE_LIMIT).build();
        PushSubscribeOptions options = PushSubscribeOptions.builder().stream(js.kvEventsStream())
                .configuration(consumer).build();
        return connection.jetStream().subscribe(subject, dispatcher, this::onNatsMessage, false, options);
    }

    private void unsubscribeQuietly(Subscription s) {
        try {
            s.getDispatcher().unsubscribe(s);
        } catch (IllegalStateException e) {
            LOG.debug("NATS {} subscription {}: {}", settings.family(), publisher.id(), LogSafe.escape(e.getMessage()));
        }
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
        boolean durable = m.isJetStream();
        byte[] data = m.getData();
        if (data == null || data.length > settings.limits().maxFrameBytes()) {
            nats.dropped(NatsDrop.OVERSIZED);
            acknowledge(m, durable);
            return;
        }
        // A JetStream consumer is bounded by its max_ack_pending instead: nothing it delivers is dropped here.
        if (queued.incrementAndGet() > MAX_QUEUED && !durable) {
            queued.decrementAndGet();
            nats.dropped(NatsDrop.BACKLOG);
            return;
        }
        ZmtpMessage frames = NatsFrames.of(settings.family(), data, publisherId);
        if (frames == null || frames == NatsFrames.ANOTHER_PUBLISHER) {
            // Another publisher's envelope on a shared subject is not ours to count: each subscription keeps its own.
            queued.decrementAndGet();
            if (frames == null) {
                nats.dropped(NatsDrop.MALFORMED);
            }
            acknowledge(m, durable);
            return;
        }
        loop.execute(() -> {
            queued.decrementAndGet();
            if (!stopping) {
                receiver.onMessage(frames);
                acknowledge(m, durable);
            } else if (durable) {
                m.nak(); // not applied: the server gives it to the next reader of the durable at once
            }
        });
    }

    private static void acknowledge(Message m, boolean durable) {
        if (durable) {
            m.ack();
        }
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
