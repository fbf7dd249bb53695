package dev.continuum.router.eventplane;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.eventplane.zmtp.RefusedAddressException;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpEndpoint;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpListener;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.eventplane.zmtp.ZmtpSubscriberHandler;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One event-channel subscription of any family (kv_metrics, kv-events): connects through its connector, runs
 * the bounded ZMTP client with the family's limits, hands every message to its {@link ChannelReceiver}, and
 * reconnects with full-jitter backoff (the floor resets only after a long session).
 *
 * <p>Confined to one event loop: every field but {@link #state} and {@link #handler} is touched only there.
 */
public final class ChannelSubscription implements ZmtpListener {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelSubscription.class);

    /** What every subscription of one family shares. */
    public record Settings(String family, ZmtpLimits limits, Backoff backoff, RandomGenerator random,
                           LongSupplier ticker) {
    }

    private final DynamoPublisher publisher;
    private final byte[] topic;
    private final @Nullable ZmtpTarget target;
    private final Transport transport;
    private final @Nullable ZmtpConnector connector;
    private final EventLoop loop;
    private final Settings settings;
    private final ChannelReceiver receiver;

    private volatile SubscriptionState state = SubscriptionState.PENDING;
    private @Nullable Channel channel;
    private @Nullable CompletableFuture<Channel> connecting;
    /** The wait for the connector to be able to reach the target (a broker covering its namespace). */
    private @Nullable CompletableFuture<Void> waiting;
    private @Nullable ScheduledFuture<?> retry;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private boolean stopping;
    private boolean departed;
    private int attempt;
    private long connectedAt;
    private boolean refusalLogged;
    /** Who carries the current connection (a broker's id), for the admin view; null for direct or none. */
    private volatile @Nullable String carrier;
    /** The current connection's handler, for the buffer-cost measurement. */
    private volatile @Nullable ZmtpSubscriberHandler handler;

    public ChannelSubscription(DynamoPublisher publisher, @Nullable ZmtpConnector connector, Transport transport,
            EventLoop loop, Settings settings, ChannelReceiver receiver) {
        this.publisher = publisher;
        this.transport = transport;
        this.connector = connector;
        this.loop = loop;
        this.settings = settings;
        this.receiver = receiver;
        this.topic = settings.family().getBytes(StandardCharsets.US_ASCII);
        this.target = ZmtpEndpoint.parse(publisher.address())
                .map(e -> new ZmtpTarget(publisher.namespace(), e, settings.family())).orElse(null);
    }

    /** Bytes the current connection's ZMTP handler holds (0 without one). */
    public int retainedBufferBytes() {
        ZmtpSubscriberHandler h = handler;
        return h == null ? 0 : h.retainedBufferBytes();
    }

    public DynamoPublisher publisher() {
        return publisher;
    }

    public SubscriptionState state() {
        return state;
    }

    public Transport transport() {
        return transport;
    }

    public ChannelReceiver receiver() {
        return receiver;
    }

    public SubscriptionView view() {
        SubscriptionState now = state;
        return new SubscriptionView(settings.family(), publisher.id().publisherId(), publisher.namespace(),
                publisher.component(), now, transport, now == SubscriptionState.CONNECTED ? carrier : null);
    }

    /** Starts connecting; with no connector (broker transport without the bus) it stays pending. */
    public void start() {
        loop.execute(() -> {
            if (connector == null || target == null) {
                if (target == null) {
                    LOG.warn("{} publisher {} has an endpoint that is not tcp://host:port; not subscribing",
                            settings.family(), publisher.id());
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

    private void dial(ZmtpConnector via, ZmtpTarget to) {
        state = SubscriptionState.CONNECTING;
        ZmtpSubscriberHandler h = new ZmtpSubscriberHandler(settings.limits(), topic, this);
        handler = h;
        CompletableFuture<Channel> attemptFuture = via.connect(to, loop, h);
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
            carrier = via.carrierOf(ch);
            ch.closeFuture().addListener(f -> loop.execute(() -> closed(ch)));
        }, loop);
    }

    private void failed(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof RefusedAddressException) {
            receiver.onTransportRefused();
            if (!refusalLogged) {
                refusalLogged = true;
                LOG.warn("{} publisher {}: {}", settings.family(), LogSafe.escape(publisher.id()),
                        LogSafe.escape(cause.getMessage()));
            }
        } else {
            LOG.debug("{} publisher {}: connect failed ({})", settings.family(), publisher.id(),
                    cause.getClass().getSimpleName());
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
        if (state == SubscriptionState.CONNECTED) {
            receiver.onDisconnected();
        }
        boolean longSession = connectedAt != 0
                && settings.ticker().getAsLong() - connectedAt >= settings.backoff().resetAfter().toNanos();
        connectedAt = 0;
        // A lost carrier (a broker went away) is not the publisher's fault: retry at the floor, elsewhere.
        ZmtpConnector c = connector;
        scheduleRetry(longSession || (c != null && c.carrierLost(ch)));
    }

    private void scheduleRetry(boolean resetFloor) {
        if (resetFloor) {
            attempt = 0;
        }
        Duration delay = settings.backoff().delay(attempt, settings.random());
        attempt = Math.min(attempt + 1, 62);
        state = SubscriptionState.BACKOFF;
        retry = loop.schedule(this::connect, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void onConnected() {
        state = SubscriptionState.CONNECTED;
        connectedAt = settings.ticker().getAsLong();
        receiver.onConnected();
    }

    @Override
    public void onMessage(ZmtpMessage message) {
        receiver.onMessage(message);
    }

    @Override
    public void onRefused(String reason) {
        receiver.onTransportRefused();
        if (!refusalLogged) {
            refusalLogged = true;
            LOG.warn("{} publisher {}: refused ({}); reconnecting with backoff", settings.family(),
                    LogSafe.escape(publisher.id()), LogSafe.escape(reason));
        } else {
            LOG.debug("{} publisher {}: refused ({})", settings.family(), LogSafe.escape(publisher.id()),
                    LogSafe.escape(reason));
        }
    }

    /**
     * Stops for good: no more reconnects; the channel closes. {@code departed}: the publisher left discovery
     * (the receiver drops what it delivered). The future completes once the channel is closed.
     */
    public CompletableFuture<Void> stop(boolean departed) {
        loop.execute(() -> {
            if (stopping) {
                return;
            }
            stopping = true;
            this.departed = departed;
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
    public void abort() {
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
        receiver.onStopped(departed);
        state = SubscriptionState.PENDING;
        stopped.complete(null);
    }
}
