package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.proxy.metrics.ProxyMetrics;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.ProxyService;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link HttpServer} on Netty: epoll when the native transport loads (needed for unix sockets),
 * NIO otherwise. One event-loop group ({@code server.workers} threads, 0 = one per core) accepts,
 * serves clients, opens upstream connections and runs health probes, so a request and its
 * upstream stay on one thread.
 */
final class NettyHttpServer extends StartStopSupport implements HttpServer {
    private static final Logger log = LoggerFactory.getLogger(NettyHttpServer.class);

    private final RouterConfig initialConfig;
    private final MeterRegistry registry;
    private final LocalRoutes routes;
    private final Executor blockingExecutor;
    private final ProxyOptions options;
    private final IngressLimits limits;
    private final @Nullable Duration shutdownGrace;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private final List<Channel> listeners = new CopyOnWriteArrayList<>();
    private final List<SocketAddress> bound = new CopyOnWriteArrayList<>();
    private final List<Path> unixSockets = new CopyOnWriteArrayList<>();
    private volatile @Nullable EventLoopGroup group;
    private volatile @Nullable ProxyService proxy;
    private volatile @Nullable ServerContext context;
    private volatile boolean ready;
    private volatile Duration configuredGrace;

    private NettyHttpServer(ServerBuilder b) {
        this.initialConfig = b.config;
        this.registry = b.registry;
        this.routes = new LocalRoutes(b.exact, b.prefixes, b.config.metrics().endpoint());
        this.blockingExecutor = b.blockingExecutor;
        this.options = b.options;
        this.limits = b.limits;
        this.shutdownGrace = b.shutdownGrace;
        this.configuredGrace = b.config.server().shutdownGracePeriod();
    }

    @Override
    protected CompletableFuture<Void> doStart() {
        boolean epoll = Epoll.isAvailable();
        int workers = initialConfig.server().workers();
        int threads = workers > 0 ? workers : Runtime.getRuntime().availableProcessors();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("continuum-io"), io);
        group = g;
        try {
            ProxyMetrics metrics = new ProxyMetrics(registry);
            ProxyService p = ProxyService.create(initialConfig, metrics, g, epoll, options);
            proxy = p;
            ServerContext ctx = new ServerContext(p, metrics, routes, blockingExecutor, limits, options.nanoClock());
            context = ctx;
            for (BindAddress address : initialConfig.server().bindAddresses()) {
                if (address instanceof BindAddress.Tcp tcp) {
                    bindTcp(g, epoll, ctx, tcp);
                } else if (address instanceof BindAddress.Unix unix) {
                    bindUnix(g, epoll, ctx, unix);
                }
            }
        } catch (RuntimeException e) {
            abortStart();
            throw e;
        }
        ready = true;
        log.info("listening on {} ({} transport, {} event loops)", bound, epoll ? "epoll" : "nio", threads);
        return CompletableFuture.completedFuture(null);
    }

    private void bindTcp(EventLoopGroup g, boolean epoll, ServerContext ctx, BindAddress.Tcp tcp) {
        ServerBootstrap b = new ServerBootstrap()
                .group(g)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark())
                .childHandler(new HttpChannelInitializer(ctx));
        String host = tcp.host().startsWith("[") ? tcp.host().substring(1, tcp.host().length() - 1) : tcp.host();
        ChannelFuture f = b.bind(new InetSocketAddress(host, tcp.port())).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("cannot listen on " + tcp + ": " + f.cause(), f.cause());
        }
        listeners.add(f.channel());
        bound.add(f.channel().localAddress());
    }

    private void bindUnix(EventLoopGroup g, boolean epoll, ServerContext ctx, BindAddress.Unix unix) {
        if (!epoll) {
            throw new IllegalStateException("cannot listen on " + unix + ": unix sockets need the epoll transport ("
                    + Epoll.unavailabilityCause() + ")");
        }
        Path path = unix.path();
        removeStaleSocket(path);
        ServerBootstrap b = new ServerBootstrap()
                .group(g)
                .channel(EpollServerDomainSocketChannel.class)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark())
                .childHandler(new HttpChannelInitializer(ctx));
        ChannelFuture f = b.bind(new DomainSocketAddress(path.toFile())).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IllegalStateException("cannot listen on " + unix + ": " + f.cause(), f.cause());
        }
        listeners.add(f.channel());
        unixSockets.add(path);
        bound.add(f.channel().localAddress());
        Integer mode = initialConfig.server().socketMode();
        if (mode != null) {
            try {
                Files.setPosixFilePermissions(path, permissions(mode));
            } catch (IOException | UnsupportedOperationException e) {
                throw new IllegalStateException("cannot set socket_mode " + Integer.toOctalString(mode) + " on " + path, e);
            }
        }
    }

    /** A socket file left by a previous run is deleted; any other kind of file is refused. */
    private static void removeStaleSocket(Path path) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) || Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalStateException("unix socket path " + path + " exists and is not a socket: refusing to delete it");
        }
        try {
            Files.delete(path);
            log.info("removed stale unix socket {}", path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove stale unix socket " + path, e);
        }
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
        for (int bit = 0; bit < order.length; bit++) {
            if ((mode & (1 << bit)) != 0) {
                out.add(order[bit]);
            }
        }
        return out;
    }

    private WriteBufferWaterMark waterMark() {
        return new WriteBufferWaterMark(limits.writeBufferLowWaterMark(), limits.writeBufferHighWaterMark());
    }

    private void abortStart() {
        for (Channel ch : listeners) {
            ch.close().awaitUninterruptibly();
        }
        deleteUnixSockets();
        ProxyService p = proxy;
        if (p != null) {
            p.close();
        }
        EventLoopGroup g = group;
        if (g != null) {
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
        terminated.complete(null);
    }

    @Override
    protected String lifecycleName() {
        return "HTTP server";
    }

    @Override
    public List<SocketAddress> boundAddresses() {
        return List.copyOf(bound);
    }

    @Override
    public boolean ready() {
        return ready;
    }

    @Override
    public ProxyService proxy() {
        ProxyService p = proxy;
        if (p == null) {
            throw new IllegalStateException("server not started");
        }
        return p;
    }

    @Override
    public void apply(RouterConfig config) {
        if (!config.server().bindAddresses().equals(initialConfig.server().bindAddresses())) {
            log.warn("server.bind_address changed: listeners are not rebound until restart");
        }
        configuredGrace = config.server().shutdownGracePeriod();
        proxy().apply(config);
    }

    /** The graceful shutdown (see {@link HttpServer}); also releases a failed start (already done then). */
    @Override
    protected CompletableFuture<Void> doStop() {
        ready = false;
        ServerContext ctx = context;
        EventLoopGroup g = group;
        if (ctx == null || g == null || terminated.isDone()) {
            terminated.complete(null);
            return terminated;
        }
        Duration grace = shutdownGrace != null ? shutdownGrace : configuredGrace;
        Duration configured = ctx.serverConfig().shutdownQuietPeriod();
        Duration quiet = configured.compareTo(grace) > 0 ? grace : configured;
        log.info("shutting down: not ready; listeners keep accepting for the quiet period of {}", quiet);
        new QuietPeriod(g.next(), options.nanoClock(), quiet).start()
                .thenRun(() -> closeListenersAndDrain(ctx, g, grace.minus(quiet)));
        return terminated;
    }

    /** After the quiet period: listeners close, connections end at a message boundary, the rest at the deadline. */
    private void closeListenersAndDrain(ServerContext ctx, EventLoopGroup g, Duration drainGrace) {
        long deadline = System.nanoTime() + drainGrace.toNanos();
        ctx.closing = true;
        log.info("shutting down: closing listeners, draining {} connection(s) for up to {}",
                ctx.connections.size(), drainGrace);
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (Channel l : listeners) {
            CompletableFuture<Void> c = new CompletableFuture<>();
            l.close().addListener(f -> c.complete(null));
            closes.add(c);
        }
        CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).thenRun(() -> {
            deleteUnixSockets();
            for (Channel ch : ctx.connections) {
                // Idle connections close now; busy ones close after their current response.
                ch.pipeline().fireUserEventTriggered(ShutdownEvent.INSTANCE);
            }
            ctx.checkDrained();
            long left = Math.max(0, deadline - System.nanoTime());
            g.next().schedule(() -> ctx.drained.complete(null), left, TimeUnit.NANOSECONDS);
            ctx.drained.thenRun(() -> finishShutdown(ctx, g));
        });
    }

    private void finishShutdown(ServerContext ctx, EventLoopGroup g) {
        int forced = ctx.connections.size();
        if (forced > 0) {
            log.warn("grace period over: closing {} connection(s) still open", forced);
        }
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (Channel ch : ctx.connections) {
            CompletableFuture<Void> c = new CompletableFuture<>();
            ch.close().addListener(f -> c.complete(null));
            closes.add(c);
        }
        CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            ctx.proxy.close();
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS).addListener(f -> {
                log.info("shutdown complete");
                terminated.complete(null);
            });
        });
    }

    private void deleteUnixSockets() {
        for (Path p : unixSockets) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                log.warn("cannot delete unix socket {}: {}", p, e.toString());
            }
        }
        unixSockets.clear();
    }

    static final class ServerBuilder implements HttpServer.Builder {
        private final RouterConfig config;
        private final MeterRegistry registry;
        private final Map<String, LocalRoute> exact = new LinkedHashMap<>();
        private final Map<String, LocalRoute> prefixes = new LinkedHashMap<>();
        private Executor blockingExecutor = ForkJoinPool.commonPool();
        private ProxyOptions options = ProxyOptions.defaults();
        private IngressLimits limits = IngressLimits.DEFAULT;
        private @Nullable Duration shutdownGrace;

        ServerBuilder(RouterConfig config, MeterRegistry registry) {
            this.config = config;
            this.registry = registry;
        }

        @Override
        public Builder routeExact(String path, LocalRoute route) {
            checkPath(path);
            exact.put(path, route);
            return this;
        }

        @Override
        public Builder routePrefix(String prefix, LocalRoute route) {
            checkPath(prefix);
            prefixes.put(prefix, route);
            return this;
        }

        private static void checkPath(String path) {
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("path: \"" + path + "\" (expected: starts with /)");
            }
            if (HttpRequestHandler.proxyRoute(path) != null) {
                throw new IllegalArgumentException("path: \"" + path + "\" (expected: not a proxied route)");
            }
        }

        @Override
        public Builder blockingExecutor(Executor executor) {
            this.blockingExecutor = executor;
            return this;
        }

        @Override
        public Builder proxyOptions(ProxyOptions proxyOptions) {
            this.options = proxyOptions;
            return this;
        }

        @Override
        public Builder ingressLimits(IngressLimits ingressLimits) {
            this.limits = ingressLimits;
            return this;
        }

        @Override
        public Builder shutdownGrace(Duration grace) {
            if (grace.isNegative()) {
                throw new IllegalArgumentException("shutdownGrace: " + grace + " (expected: >= 0)");
            }
            this.shutdownGrace = grace;
            return this;
        }

        @Override
        public HttpServer build() {
            return new NettyHttpServer(this);
        }
    }
}
