package dev.continuum.router.eventbus;

import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.BusTls;
import dev.continuum.router.eventbus.config.EventBusConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-bus listener: its own TCP port, TLS 1.3 and HTTP/2 only, the credentials of
 * {@code dynamo.event_bus.brokers}, sessions and their control streams (docs/event-bus-protocol.md).
 * {@link #apply} takes a reloaded configuration with the same address and switch: credentials, grants and
 * limits apply to the next request, a changed client CA starts a new CA generation, and live sessions that
 * lost their credential or grant end.
 */
public final class EventBusListener extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(EventBusListener.class);

    private final ListenerContext context;
    private final int threads;
    private volatile @Nullable EventLoopGroup group;
    private volatile @Nullable Channel server;

    /**
     * @param config   an enabled configuration (its TLS files are read at start)
     * @param timings  the protocol timers ({@link ListenerTimings#DEFAULTS} outside tests)
     * @param nanoTime monotonic clock for idle tracking ({@code System::nanoTime} outside tests)
     */
    public EventBusListener(EventBusConfig config, ListenerTimings timings, MeterRegistry meters, LongSupplier nanoTime,
                            int threads) {
        if (!config.enabled() || config.tls() == null) {
            throw new IllegalArgumentException("config: disabled (expected: an enabled event_bus with tls)");
        }
        SessionRegistry sessions = new SessionRegistry(config.maxSessions());
        BusTlsContext tls = BusTlsContext.build(Objects.requireNonNull(config.tls()), null);
        ListenerState state = new ListenerState(config, new Credentials(config.brokers(), tls.caGeneration(),
                RevokedCredentials.EMPTY), tls);
        this.context = new ListenerContext(state, sessions, new BusMetrics(meters, sessions), timings, nanoTime);
        this.threads = threads;
    }

    /** The sessions, for the command API. */
    public BusSessions sessions() {
        return context.sessions;
    }

    /** The bound address, once started. */
    public InetSocketAddress localAddress() {
        Channel bound = server;
        if (bound == null) {
            throw new IllegalStateException("the event bus listener is not started");
        }
        return (InetSocketAddress) bound.localAddress();
    }

    /** Refusals so far with {@code code}, for tests and the admin view. */
    public double refusals(BusErrorCode code) {
        return context.metrics.refusals(code);
    }

    /** Open TCP connections. */
    public int connectionCount() {
        return context.metrics.connections.get();
    }

    /** Session requests waiting for their hello (each holding admission). */
    public int pendingSessionRequests() {
        return context.sessions.pendingCount();
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        EventBusConfig config = context.state().config();
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(threads,
                new io.netty.util.concurrent.DefaultThreadFactory("continuum-event-bus", true), NioIoHandler.newFactory());
        group = loops;
        CompletableFuture<Void> started = new CompletableFuture<>();
        ServerBootstrap bootstrap = new ServerBootstrap().group(loops)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 128)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        accept(channel);
                    }
                });
        ChannelFuture bind = bootstrap.bind(config.listen().host(), config.listen().port());
        bind.addListener(f -> {
            if (f.isSuccess()) {
                server = bind.channel();
                LOG.info("event bus listener on {}", bind.channel().localAddress());
                started.complete(null);
            } else {
                started.completeExceptionally(new IllegalStateException("event bus listener cannot bind "
                        + config.listen() + " (dynamo.event_bus.listen)", f.cause()));
            }
        });
        return started;
    }

    private void accept(SocketChannel channel) {
        BusMetrics metrics = context.metrics;
        int open = metrics.connections.incrementAndGet();
        channel.closeFuture().addListener(f -> metrics.connections.decrementAndGet());
        if (open > context.state().config().maxConnections()) {
            metrics.refused(BusErrorCode.CONNECTION_LIMIT);
            channel.close();
            return;
        }
        BusConnection connection = new BusConnection(channel, context.timings, metrics);
        channel.attr(BusConnection.KEY).set(connection);
        channel.closeFuture().addListener(f -> connection.closed());
        connection.accepted();
        channel.pipeline().addLast("first-byte", new FirstByteHandler(() -> this::installTls, metrics));
    }

    private void installTls(ChannelHandlerContext ctx) {
        ListenerState state = context.state();
        SslHandler ssl = state.tls().context().newHandler(ctx.alloc());
        ssl.setHandshakeTimeoutMillis(0); // BusConnection's deadline counts from accept instead
        ctx.pipeline().addAfter(ctx.name(), "tls", ssl);
        ctx.pipeline().addAfter("tls", "tls-done", new TlsHandshakeHandler(context, state));
    }

    /**
     * Applies a reloaded configuration with the same {@code listen} (another address needs a restart).
     * Throws {@link IllegalStateException} naming the field when new TLS files cannot be used; the running
     * configuration then stays.
     */
    public void apply(EventBusConfig next) {
        if (!next.enabled() || !next.listen().equals(context.state().config().listen()) || next.tls() == null) {
            throw new IllegalArgumentException("next: a new address or switch (expected: restart the listener)");
        }
        ListenerState before = context.state();
        BusTls tls = Objects.requireNonNull(next.tls());
        BusTlsContext tlsContext = tls.equals(before.config().tls()) && !caChanged(before.tls(), tls)
                ? before.tls() : BusTlsContext.build(tls, before.tls());
        Credentials credentials = before.credentials().next(next.brokers(), tlsContext.caGeneration());
        context.state(new ListenerState(next, credentials, tlsContext));
        context.sessions.maxSessions(next.maxSessions());
        for (BusSession session : context.sessions.snapshot()) {
            BusErrorCode verdict = verdict(session, credentials);
            if (verdict != null) {
                LOG.info("event bus session {} of {} ends on reload: {}", session.id(), session.entryId(),
                        verdict.code());
                session.end(verdict);
            }
        }
    }

    private static boolean caChanged(BusTlsContext current, BusTls tls) {
        byte[] ca = current.caBytes();
        if (tls.clientCa() == null || ca == null) {
            return (tls.clientCa() == null) != (ca == null);
        }
        try {
            return !java.util.Arrays.equals(ca, java.nio.file.Files.readAllBytes(java.nio.file.Path.of(tls.clientCa())));
        } catch (java.io.IOException e) {
            return true; // build() reports the unreadable file
        }
    }

    /** Why a live session cannot stay under {@code credentials}, or null when it can. */
    private static @Nullable BusErrorCode verdict(BusSession session, Credentials credentials) {
        BrokerEntry now = credentials.entry(session.entryId());
        BrokerEntry then = session.entry();
        if (now == null) {
            return BusErrorCode.CREDENTIAL_REVOKED;
        }
        if (session.byToken() ? !Objects.equals(now.tokenHash(), then.tokenHash())
                : session.caGeneration() != credentials.caGeneration()) {
            return BusErrorCode.CREDENTIAL_REVOKED;
        }
        if (now.role() != then.role() || !now.clientId().equals(session.clientId())
                || !session.namespaces().stream().allMatch(now::allowsNamespace)
                || !now.backends().containsAll(session.backends())) {
            return BusErrorCode.FORBIDDEN;
        }
        return null;
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        for (BusSession session : context.sessions.snapshot()) {
            session.end(BusErrorCode.SHUTTING_DOWN);
        }
        Channel bound = server;
        EventLoopGroup loops = group;
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        if (bound != null) {
            bound.close();
        }
        if (loops == null) {
            context.metrics.close();
            stopped.complete(null);
            return stopped;
        }
        // A short quiet period lets the sessions' shutting_down trailers go out before the channels close.
        loops.shutdownGracefully(100, 2000, TimeUnit.MILLISECONDS).addListener(f -> {
            context.metrics.close();
            stopped.complete(null);
        });
        return stopped;
    }

    @Override
    protected String lifecycleName() {
        return "event bus listener";
    }
}
