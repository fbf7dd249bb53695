package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BusProtocol;
import dev.continuum.router.eventbus.BusTlsContext;
import dev.continuum.router.eventbus.ControlJson;
import dev.continuum.router.eventbus.EventLoopShutdown;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.core.logging.LogSafe;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-cluster event broker (role {@code broker}, docs/event-bus-protocol.md): dials out to the router's bus,
 * says {@code hello} for its namespaces, and for each {@code subscribe} dials the publisher, if its discovery
 * advertises it, and relays bytes both ways over a data stream ({@link RelayStream}). It dials again with
 * backoff (0.5 s doubling to 30 s) whenever the session ends, and {@link #drain} hands its streams back before
 * a shutdown.
 *
 * <p>One event loop runs the bus connection and every publisher connection, so a relay needs no locks.
 */
public final class BrokerAgent extends StartStopSupport {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerAgent.class);
    private static final Duration RECONNECT_FLOOR = Duration.ofMillis(500);
    private static final Duration RECONNECT_CEILING = Duration.ofSeconds(30);

    private final AgentSettings settings;
    private final AgentRole role;
    private final RandomGenerator random = RandomGenerator.getDefault();
    private final SslContext ssl;
    private final ConcurrentHashMap<String, RelayStream> relays = new ConcurrentHashMap<>();
    private final AtomicReference<@Nullable String> sessionId = new AtomicReference<>();
    private volatile @Nullable EventLoopGroup group;
    private volatile @Nullable Channel connection;
    private volatile @Nullable Http2StreamChannel control;
    private volatile boolean stopping;
    private volatile boolean draining;
    private volatile CompletableFuture<Void> drained = new CompletableFuture<>();
    private int attempt;

    public BrokerAgent(AgentSettings settings, AdvertisedTargets advertised) {
        this(settings, new BrokerRole(settings.namespaces(), advertised));
    }

    /** The same session code for another role (the kv-listener's). */
    public BrokerAgent(AgentSettings settings, AgentRole role) {
        this.settings = settings;
        this.role = role;
        this.ssl = clientContext(settings);
    }

    private static SslContext clientContext(AgentSettings s) {
        try {
            SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .protocols(BusTlsContext.TLS_1_3)
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_2));
            if (s.trustedCa() != null) {
                builder.trustManager(s.trustedCa().toFile());
            }
            if (s.clientCert() != null && s.clientKey() != null) {
                builder.keyManager(s.clientCert().toFile(), s.clientKey().toFile());
            }
            return builder.build();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("tls: cannot build the client TLS context (" + e.getMessage() + ")",
                    e instanceof IOException io ? new UncheckedIOException(io) : e);
        }
    }

    /** The current session's ID, or null between sessions. */
    public @Nullable String sessionId() {
        return sessionId.get();
    }

    /** Data streams relaying now. */
    public int relayCount() {
        return relays.size();
    }

    /** The stream IDs relaying now. */
    public java.util.Set<String> relayIds() {
        return java.util.Set.copyOf(relays.keySet());
    }

    /** Drops the connection without a word and stops dialling, as a killed process would (tests). */
    public void abort() {
        stopping = true;
        Channel conn = connection;
        if (conn != null) {
            conn.close();
        }
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("continuum-broker", true),
                NioIoHandler.newFactory());
        dial();
        return CompletableFuture.completedFuture(null);
    }

    private EventLoopGroup group() {
        EventLoopGroup g = group;
        if (g == null) {
            throw new IllegalStateException("the broker agent is not started");
        }
        return g;
    }

    private void dial() {
        if (stopping) {
            return;
        }
        new Bootstrap().group(group()).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectBudget().toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(ssl.newHandler(ch.alloc(), settings.host(), settings.port()));
                        ch.pipeline().addLast(new HandshakeHandler());
                    }
                })
                .connect(settings.host(), settings.port())
                .addListener(f -> {
                    if (!f.isSuccess()) {
                        LOG.warn("event bus {}:{} unreachable: {}", settings.host(), settings.port(),
                                LogSafe.escape(f.cause().getMessage()));
                        redial();
                    }
                });
    }

    private void redial() {
        if (stopping) {
            return;
        }
        long ceiling = Math.min(RECONNECT_CEILING.toNanos(), RECONNECT_FLOOR.toNanos() << Math.min(attempt, 6));
        long delay = RECONNECT_FLOOR.toNanos() + random.nextLong(ceiling - RECONNECT_FLOOR.toNanos() + 1);
        attempt++;
        group().schedule(this::dial, delay, TimeUnit.NANOSECONDS);
    }

    /** After TLS: HTTP/2 when ALPN chose it, then the control stream. */
    private final class HandshakeHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent done) {
                if (!done.isSuccess()) {
                    LOG.warn("event bus TLS handshake failed: {}", LogSafe.escape(done.cause().getMessage()));
                    ctx.close();
                    return;
                }
                ctx.pipeline().addLast(Http2FrameCodecBuilder.forClient().build());
                ctx.pipeline().addLast(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
                ctx.pipeline().remove(this);
                openSession(ctx.channel());
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            super.channelInactive(ctx);
            redial(); // closed before the session began
        }
    }

    private void openSession(Channel conn) {
        connection = conn;
        AgentControlHandler handler = new AgentControlHandler(this);
        new Http2StreamChannelBootstrap(conn).handler(handler).open().addListener(f -> {
            if (!f.isSuccess()) {
                conn.close();
                return;
            }
            Http2StreamChannel stream = (Http2StreamChannel) f.getNow();
            control = stream;
            Http2Headers headers = request(BusProtocol.SESSION_PATH).set("content-type", "application/x-ndjson");
            stream.write(new DefaultHttp2HeadersFrame(headers, false));
            ObjectNode hello = ControlJson.object("hello");
            role.describe(hello);
            hello.put("client_id", settings.clientId());
            hello.putArray("versions").add(BusProtocol.VERSION);
            stream.writeAndFlush(new DefaultHttp2DataFrame(ControlJson.line(stream.alloc(), hello)));
        });
        conn.closeFuture().addListener(f -> sessionEnded());
    }

    public Http2Headers request(String path) {
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("https")
                .authority(settings.host() + ":" + settings.port()).path(path)
                .set(BusProtocol.VERSION_HEADER, String.valueOf(BusProtocol.VERSION));
        if (settings.token() != null) {
            headers.set("authorization", "Bearer " + settings.token());
        }
        return headers;
    }

    /** The router welcomed the session. */
    public void welcomed(String id) {
        sessionId.set(id);
        drained = new CompletableFuture<>();
        attempt = 0;
        LOG.info("event bus session {} welcomed", id);
    }

    /** The router refused the session request or ended the session; the connection closes and is dialled again. */
    public void refused(String code) {
        LOG.warn("event bus session refused or ended: {}", LogSafe.escape(code));
        Channel conn = connection;
        if (conn != null) {
            conn.close();
        }
    }

    private void sessionEnded() {
        sessionId.set(null);
        control = null;
        connection = null;
        for (RelayStream relay : relays.values()) {
            relay.close();
        }
        relays.clear();
        drained.complete(null);
        if (!draining) {
            redial();
        }
    }

    /** {@code subscribe}: relay the upstream when the role allows the target, else refuse. */
    public void subscribe(String streamId, com.fasterxml.jackson.databind.JsonNode target) {
        Channel conn = connection;
        String session = sessionId.get();
        if (conn == null || session == null) {
            return;
        }
        if (draining) {
            streamClosed(streamId, "draining", "the broker is draining");
            return;
        }
        AgentRole.Choice choice = role.choose(target);
        if (choice instanceof AgentRole.Refusal refusal) {
            streamClosed(streamId, refusal.code(), refusal.message());
            return;
        }
        RelayStream relay = new RelayStream(this, conn, streamId, session);
        relays.put(streamId, relay);
        relay.start((AgentRole.Upstream) choice, settings.connectBudget());
    }

    /** {@code unsubscribe}: the router no longer wants the stream. */
    public void unsubscribe(String streamId) {
        RelayStream relay = relays.remove(streamId);
        if (relay != null) {
            relay.close();
        }
        if (draining && relays.isEmpty()) {
            drained.complete(null);
        }
    }

    /** A relay ended on its own (the publisher closed or could not be reached). */
    public void relayEnded(String streamId, String code, String message) {
        if (relays.remove(streamId) != null) {
            streamClosed(streamId, code, message);
        }
        if (draining && relays.isEmpty()) {
            drained.complete(null);
        }
    }

    public void streamClosed(String streamId, String code, String message) {
        ObjectNode m = ControlJson.object("stream_closed");
        m.put("stream_id", streamId).put("code", code).put("message", message);
        send(m);
    }

    public void send(ObjectNode message) {
        Http2StreamChannel c = control;
        if (c != null && c.isActive()) {
            c.writeAndFlush(new DefaultHttp2DataFrame(ControlJson.line(c.alloc(), message)));
        }
    }

    /**
     * Sends {@code draining}, waits until the router has unsubscribed every stream (or {@code timeout}), then ends
     * the session and stops dialling. Completes when the session is over.
     */
    public CompletableFuture<Void> drain(String reason, Duration timeout) {
        draining = true;
        CompletableFuture<Void> done = drained;
        Http2StreamChannel c = control;
        if (c == null || !c.isActive()) {
            done.complete(null);
            return done;
        }
        c.eventLoop().execute(() -> {
            ObjectNode m = ControlJson.object("draining");
            m.put("reason", reason);
            send(m);
            if (relays.isEmpty()) {
                done.complete(null);
            }
        });
        return done.completeOnTimeout(null, timeout.toNanos(), TimeUnit.NANOSECONDS).thenCompose(v -> {
            CompletableFuture<Void> closed = new CompletableFuture<>();
            Channel conn = connection;
            Http2StreamChannel ctl = control;
            if (ctl != null && ctl.isActive()) {
                ctl.writeAndFlush(new DefaultHttp2DataFrame(true)); // ends our half: client_closed
            }
            if (conn == null) {
                closed.complete(null);
            } else {
                // The router answers the end of our half with its trailers; give it a moment, then close.
                conn.eventLoop().schedule(() -> conn.close(), 1, TimeUnit.SECONDS);
                conn.closeFuture().addListener(f -> closed.complete(null));
            }
            return closed;
        });
    }

    @Override
    protected CompletableFuture<Void> doStop() {
        CompletableFuture<Void> drainedFirst = connection == null || draining ? CompletableFuture.completedFuture(null)
                : drain("stopping", settings.drainTimeout());
        return drainedFirst.handle((v, e) -> {
            stopping = true;
            Channel conn = connection;
            if (conn != null) {
                conn.close();
            }
            return null;
        }).thenCompose(v -> EventLoopShutdown.of(group));
    }

    @Override
    protected String lifecycleName() {
        return "event broker agent";
    }
}
