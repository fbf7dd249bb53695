package dev.continuum.router.eventplane.nats;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Consumer;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's one NATS connection, shared by every NATS subscription (docs/nats.md). {@link #apply} takes a
 * new {@code dynamo.nats}: an unchanged one does nothing; a changed one connects under the new settings on its
 * own thread, attaches every {@link NatsTap} to the new connection once it is up and only then closes the old
 * one, so no subscription is without a connection while the new one comes up. The client reconnects by itself
 * after a loss (forever, {@code reconnect_wait} apart) and resubscribes; taps are told so they apply the gap
 * rules. Routing never waits on any of this.
 */
public final class NatsConnection extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(NatsConnection.class);

    private final Set<NatsTap> taps = ConcurrentHashMap.newKeySet();
    private final Counter[] dropped = new Counter[NatsDrop.values().length];
    private final Counter reconnects;
    private volatile NatsConnectionState state = NatsConnectionState.OFF;
    private NatsConfig config = NatsConfig.DEFAULTS;
    private @Nullable Generation current;
    private boolean stopped;

    public NatsConnection(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        for (NatsConnectionState s : NatsConnectionState.values()) {
            Gauge.builder("continuum_nats_connection_state", () -> state == s ? 1 : 0)
                    .description("1 for the shared NATS connection's current state").tag("state", s.label())
                    .register(registry);
        }
        reconnects = Counter.builder("continuum_nats_reconnects_total")
                .description("NATS connections re-established after a loss").register(registry);
        for (NatsDrop d : NatsDrop.values()) {
            dropped[d.ordinal()] = Counter.builder("continuum_nats_dropped_messages_total")
                    .description("NATS event-plane messages dropped before decoding, by reason")
                    .tag("reason", d.label()).register(registry);
        }
    }

    /** A connection with its meters in a registry of its own (tests, tools). */
    public static NatsConnection standalone() {
        return new NatsConnection(new SimpleMeterRegistry());
    }

    public NatsConnectionState connectionState() {
        return state;
    }

    /** Counts a dropped message (called by subscriptions). */
    public void dropped(NatsDrop reason) {
        dropped[reason.ordinal()].increment();
    }

    public double droppedCount(NatsDrop reason) {
        return dropped[reason.ordinal()].count();
    }

    public double reconnectCount() {
        return reconnects.count();
    }

    /** The JetStream settings of the connection taps are attached to now, or null (core NATS only). */
    public synchronized @Nullable NatsJetStreamConfig jetstream() {
        Generation g = current;
        return g == null ? null : g.settings.jetstream();
    }

    /** Adds a tap; it is attached at once when a connection is up. */
    public void register(NatsTap tap) {
        Connection c;
        Dispatcher d;
        synchronized (this) {
            taps.add(tap);
            Generation g = current;
            c = g == null ? null : g.connection;
            d = g == null ? null : g.dispatcher;
        }
        if (c != null && d != null) {
            tap.attach(c, d);
        }
    }

    /** Removes a tap; its subscriptions are its own to close. */
    public void unregister(NatsTap tap) {
        taps.remove(tap);
    }

    /** Applies {@code next}: nothing when unchanged, else connects under it and retires the old connection. */
    public synchronized void apply(NatsConfig next) {
        Objects.requireNonNull(next, "next");
        if (stopped || next.equals(config) && (current != null || !next.enabled())) {
            config = next;
            return;
        }
        config = next;
        if (state() != dev.continuum.router.core.lifecycle.LifecycleState.STARTED
                && state() != dev.continuum.router.core.lifecycle.LifecycleState.STARTING) {
            return; // the start connects under the latest config
        }
        connect(next);
    }

    @Override
    protected String lifecycleName() {
        return "NATS connection";
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        if (config.enabled()) {
            connect(config);
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        Generation g;
        synchronized (this) {
            stopped = true;
            g = current;
            current = null;
        }
        state = NatsConnectionState.OFF;
        for (NatsTap tap : taps) {
            tap.detached();
        }
        if (g != null) {
            g.retire();
        }
        return CompletableFuture.completedFuture(null);
    }

    private void connect(NatsConfig next) {
        Generation previous = current;
        if (!next.enabled()) {
            current = null;
            state = NatsConnectionState.OFF;
            for (NatsTap tap : taps) {
                tap.detached();
            }
            if (previous != null) {
                previous.retire();
            }
            LOG.info("dynamo.nats has no servers: the NATS connection is closed");
            return;
        }
        Generation g = new Generation(next, previous);
        current = g;
        if (previous == null) {
            state = NatsConnectionState.CONNECTING;
        }
        g.thread.start();
    }

    /** One connection under one config: connected on its own thread, which an early retirement interrupts. */
    private final class Generation implements ConnectionListener, ErrorListener {
        final NatsConfig settings;
        final Thread thread;
        volatile @Nullable Connection connection;
        volatile @Nullable Dispatcher dispatcher;
        volatile @Nullable Generation previous;
        final AtomicBoolean retired = new AtomicBoolean();
        private boolean lossLogged;

        Generation(NatsConfig settings, @Nullable Generation previous) {
            this.settings = settings;
            this.previous = previous;
            this.thread = new Thread(this::run, "continuum-nats-connect");
            thread.setDaemon(true);
        }

        private void run() {
            Connection c;
            try {
                Options options = NatsOptions.of(settings, this, this);
                c = Nats.connectReconnectOnConnect(options);
            } catch (InterruptedException e) {
                return; // retired before it connected
            } catch (Exception | LinkageError e) {
                LOG.warn("NATS: cannot connect under dynamo.nats ({}); NATS subscriptions stay pending until the "
                        + "settings change", LogSafe.escape(e.getMessage()));
                return;
            }
            boolean live;
            synchronized (NatsConnection.this) {
                live = !retired.get() && current == this;
                if (live) {
                    connection = c;
                    dispatcher = c.createDispatcher();
                    state = NatsConnectionState.CONNECTED;
                }
            }
            if (!live) {
                closeQuietly(c);
                return;
            }
            LOG.info("NATS: connected to {}", LogSafe.escape(c.getConnectedUrl()));
            Dispatcher d = Objects.requireNonNull(dispatcher, "dispatcher");
            for (NatsTap tap : taps) {
                tap.attach(c, d);
            }
            Generation old = previous;
            previous = null;
            if (old != null) {
                old.retire();
            }
        }

        void retire() {
            if (!retired.compareAndSet(false, true)) {
                return;
            }
            Generation old = previous;
            previous = null;
            if (old != null) {
                old.retire();
            }
            Connection c = connection;
            if (c == null) {
                thread.interrupt();
            } else {
                closeQuietly(c);
            }
        }

        private boolean live() {
            return !retired.get() && current == this && connection != null;
        }

        @Override
        public void connectionEvent(Connection conn, Events type) {
            if (!live()) {
                return;
            }
            switch (type) {
                case DISCONNECTED -> {
                    state = NatsConnectionState.CONNECTING;
                    if (!lossLogged) {
                        lossLogged = true;
                        LOG.warn("NATS: connection lost; reconnecting every {} (routing goes on without NATS "
                                + "events meanwhile)", settings.reconnectWait());
                    }
                    for (NatsTap tap : taps) {
                        tap.lost();
                    }
                }
                case RESUBSCRIBED -> {
                    state = NatsConnectionState.CONNECTED;
                    reconnects.increment();
                    if (lossLogged) {
                        lossLogged = false;
                        LOG.info("NATS: reconnected to {}", LogSafe.escape(conn.getConnectedUrl()));
                    }
                    for (NatsTap tap : taps) {
                        tap.resumed();
                    }
                }
                default -> {
                }
            }
        }

        @Override
        public void slowConsumerDetected(Connection conn, Consumer consumer) {
            dropped(NatsDrop.SLOW_CONSUMER);
        }

        @Override
        public void errorOccurred(Connection conn, String error) {
            LOG.debug("NATS: server error {}", LogSafe.escape(error));
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            LOG.debug("NATS: {}", LogSafe.escape(exp.toString()));
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
