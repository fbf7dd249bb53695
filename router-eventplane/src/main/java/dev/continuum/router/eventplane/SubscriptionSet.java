package dev.continuum.router.eventplane;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.eventplane.nats.NatsChannelSubscription;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running subscriptions of one event-channel family, following the registry's publishers of that family
 * (docs/load-signals.md): appearing publishers start a subscription, departing or modified ones are stopped
 * concurrently, each aborted after the stop grace; at most {@code maxSubscriptions} run, admitted in ascending
 * publisher_id order, so fleet-authored records cannot exhaust file descriptors. Used by the load supervisor
 * for kv_metrics and by the KV supervisor for kv-events.
 *
 * <p>Writers ({@link #update}, {@link #stopAll}, {@link #departAll}) are serialized by the owner; readers
 * ({@link #views}, {@link #count}) never block.
 */
public final class SubscriptionSet {
    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionSet.class);

    /** Ascending publisher_id (unsigned), then namespace: the admission order of docs/load-signals.md. */
    static final Comparator<DynamoPublisher> ADMISSION_ORDER = Comparator
            .<DynamoPublisher>comparingLong(p -> p.id().publisherId() ^ Long.MIN_VALUE)
            .thenComparing(DynamoPublisher::namespace);

    private final ChannelSubscription.Settings settings;
    private final Function<DynamoPublisher, ChannelReceiver> receivers;
    private final int maxSubscriptions;
    private final Duration stopGrace;
    private final ConcurrentHashMap<PublisherId, ChannelSubscription> running = new ConcurrentHashMap<>();
    /** Channels on the {@code Nats} transport, over {@link #nats} whatever the configured ZMQ transport. */
    private final ConcurrentHashMap<PublisherId, NatsChannelSubscription> natsRunning = new ConcurrentHashMap<>();
    private @Nullable NatsConnection nats;
    private boolean capLogged;
    private boolean noNatsLogged;

    /**
     * @param receivers makes the receiver of a new subscription (called by {@link #update})
     */
    public SubscriptionSet(ChannelSubscription.Settings settings, Function<DynamoPublisher, ChannelReceiver> receivers,
            int maxSubscriptions, Duration stopGrace) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.receivers = Objects.requireNonNull(receivers, "receivers");
        this.maxSubscriptions = maxSubscriptions;
        this.stopGrace = Objects.requireNonNull(stopGrace, "stopGrace");
    }

    /**
     * The shared NATS connection channels on the {@code Nats} transport subscribe through (docs/nats.md); without
     * one they are not subscribed, and a warning says so once. Set by the owner before its first update.
     */
    public void useNats(@Nullable NatsConnection connection) {
        this.nats = connection;
    }

    /**
     * Makes the running set follow {@code publishers} (all of this family): new ones start on
     * {@code connector} under {@code transport} (or on the NATS connection when their record names the
     * {@code Nats} transport), departed or modified ones stop.
     */
    public void update(List<DynamoPublisher> publishers, @Nullable ZmtpConnector connector, Transport transport,
            EventLoopGroup group) {
        List<DynamoPublisher> ordered = new ArrayList<>(publishers);
        ordered.sort(ADMISSION_ORDER);
        if (ordered.size() > maxSubscriptions) {
            if (!capLogged) {
                capLogged = true;
                LOG.warn("{} {} publishers exceed the cap of {} subscriptions; the lowest publisher IDs are "
                        + "subscribed, the rest are not", ordered.size(), settings.family(), maxSubscriptions);
            }
            ordered = ordered.subList(0, maxSubscriptions);
        } else {
            capLogged = false;
        }
        Map<PublisherId, DynamoPublisher> desired = new HashMap<>();
        for (DynamoPublisher p : ordered) {
            desired.putIfAbsent(p.id(), p);
        }
        for (var entry : List.copyOf(running.entrySet())) {
            DynamoPublisher wanted = desired.get(entry.getKey());
            if (wanted == null || !wanted.equals(entry.getValue().publisher())) {
                // Departed (what it delivered goes with it) or modified (a new subscription reconnects).
                running.remove(entry.getKey());
                stopWithGrace(entry.getValue(), wanted == null, group);
            }
        }
        for (var entry : List.copyOf(natsRunning.entrySet())) {
            DynamoPublisher wanted = desired.get(entry.getKey());
            if (wanted == null || !wanted.equals(entry.getValue().publisher())) {
                natsRunning.remove(entry.getKey());
                stopNats(entry.getValue(), wanted == null);
            }
        }
        for (DynamoPublisher p : ordered) {
            if (p.isNats()) {
                startNats(p, group);
            } else if (!running.containsKey(p.id())) {
                ChannelSubscription s = new ChannelSubscription(p, connector, transport, group.next(), settings,
                        receivers.apply(p));
                running.put(p.id(), s);
                s.start();
            }
        }
    }

    private void startNats(DynamoPublisher p, EventLoopGroup group) {
        if (natsRunning.containsKey(p.id())) {
            return;
        }
        NatsConnection connection = nats;
        if (connection == null) {
            if (!noNatsLogged) {
                noNatsLogged = true;
                LOG.warn("{} publisher {} is on the Nats transport but this process has no NATS connection; "
                        + "not subscribing", settings.family(), p.id());
            }
            return;
        }
        NatsChannelSubscription s = new NatsChannelSubscription(p, connection, group.next(), settings,
                receivers.apply(p));
        natsRunning.put(p.id(), s);
        s.start();
    }

    private CompletableFuture<Void> stopNats(NatsChannelSubscription s, boolean departed) {
        return s.stop(departed).orTimeout(stopGrace.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(e -> null);
    }

    /**
     * Stops every subscription without dropping what it delivered (a transport switch, or the owner's stop),
     * and forgets them; a following {@link #update} starts them again. Completes when all have stopped.
     */
    public CompletableFuture<Void> stopAll(EventLoopGroup group) {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (ChannelSubscription s : running.values()) {
            stopping.add(stopWithGrace(s, false, group));
        }
        running.clear();
        for (NatsChannelSubscription s : natsRunning.values()) {
            stopping.add(stopNats(s, false));
        }
        natsRunning.clear();
        return CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new));
    }

    /**
     * A transport switch: stops every ZMQ subscription (keeping what each delivered) and closes {@code previous}
     * once they are down, since a resolution in flight still needs its pool. The caller then {@link #update}s
     * under the new connector.
     */
    public void stopAllClosing(EventLoopGroup group, @Nullable ZmtpConnector previous) {
        // Only the ZMQ subscriptions: NATS channels do not use the configured transport and keep running.
        List<CompletableFuture<Void>> zmq = new ArrayList<>();
        for (ChannelSubscription s : running.values()) {
            zmq.add(stopWithGrace(s, false, group));
        }
        running.clear();
        CompletableFuture<Void> stopping = CompletableFuture.allOf(zmq.toArray(CompletableFuture[]::new));
        if (previous != null) {
            stopping.whenComplete((v, e) -> previous.close());
        }
    }

    /**
     * The owner's stop: stops every subscription (each within the stop grace, the whole within the grace and a
     * second), then closes {@code connector} and runs {@code afterwards} (removing meters), then waits for
     * {@code following} (the owner's registry-following thread) and shuts down {@code owned} (the event loops
     * the owner created, or null); completes when those threads have ended.
     */
    public CompletableFuture<Void> shutdown(@Nullable EventLoopGroup group, @Nullable ZmtpConnector connector,
            Runnable afterwards, CompletableFuture<Void> following, @Nullable EventLoopGroup owned) {
        CompletableFuture<Void> stopping = group == null ? CompletableFuture.completedFuture(null) : stopAll(group);
        return stopping.orTimeout(stopGrace.toMillis() + 1_000, TimeUnit.MILLISECONDS)
                .handle((v, e) -> {
                    if (connector != null) {
                        connector.close();
                    }
                    afterwards.run();
                    return null;
                })
                .thenCompose(ignored -> following)
                .thenCompose(ignored -> {
                    CompletableFuture<Void> loops = new CompletableFuture<>();
                    if (owned == null) {
                        loops.complete(null);
                    } else {
                        owned.shutdownGracefully(0, 1, TimeUnit.SECONDS).addListener(f -> loops.complete(null));
                    }
                    return loops;
                });
    }

    /**
     * Stops every subscription as departed (what each delivered goes with it), as when the family is turned off.
     * Completes when all have stopped.
     */
    public CompletableFuture<Void> departAll(EventLoopGroup group) {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (ChannelSubscription s : running.values()) {
            stopping.add(stopWithGrace(s, true, group));
        }
        running.clear();
        for (NatsChannelSubscription s : natsRunning.values()) {
            stopping.add(stopNats(s, true));
        }
        natsRunning.clear();
        return CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> stopWithGrace(ChannelSubscription s, boolean departed, EventLoopGroup group) {
        CompletableFuture<Void> done = s.stop(departed);
        group.next().schedule(() -> {
            if (!done.isDone()) {
                LOG.warn("{} subscription {} did not stop within {}; aborting it", settings.family(),
                        s.publisher().id(), stopGrace);
                s.abort();
            }
        }, stopGrace.toNanos(), TimeUnit.NANOSECONDS);
        return done;
    }

    /** Running subscriptions, sorted by namespace then publisher_id (for the admin API). */
    public List<SubscriptionView> views() {
        return java.util.stream.Stream.concat(running.values().stream().map(ChannelSubscription::view),
                        natsRunning.values().stream().map(NatsChannelSubscription::view))
                .sorted(Comparator.comparing(SubscriptionView::namespace)
                        .thenComparing(v -> v.publisherId() ^ Long.MIN_VALUE))
                .toList();
    }

    /** Running subscriptions in {@code state} over {@code transport} (the subscriptions gauge). */
    public int count(SubscriptionState state, Transport transport) {
        int n = 0;
        for (ChannelSubscription s : running.values()) {
            if (s.state() == state && s.transport() == transport) {
                n++;
            }
        }
        if (transport == Transport.NATS) {
            for (NatsChannelSubscription s : natsRunning.values()) {
                if (s.state() == state) {
                    n++;
                }
            }
        }
        return n;
    }

    public int size() {
        return running.size() + natsRunning.size();
    }

    /** The running NATS subscription of a publisher, or null. */
    public @Nullable NatsChannelSubscription getNats(PublisherId id) {
        return natsRunning.get(id);
    }

    /** The running subscription of a publisher, or null. */
    public @Nullable ChannelSubscription get(PublisherId id) {
        return running.get(id);
    }
}
