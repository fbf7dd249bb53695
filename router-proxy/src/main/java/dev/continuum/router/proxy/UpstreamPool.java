package dev.continuum.router.proxy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One backend's idle keep-alive connections, kept per event loop: each loop owns its own deque
 * and is the only thread that touches it, so taking and returning a connection needs no lock and
 * a request always gets a connection on its own loop. The total idle count across loops is capped
 * at {@code connection_pool_size} with one atomic counter. Connections that close while idle
 * remove themselves; an idle connection that receives data or stays idle past the idle timeout is
 * closed by {@link UpstreamHandler}.
 */
final class UpstreamPool {
    interface AcquireCallback {
        /** {@code reused}: the connection served an earlier request (it may turn out stale). */
        void onAcquired(Channel ch, boolean reused);

        void onConnectFailed(Throwable cause);
    }

    private final UpstreamTransport transport;
    private final BackendEndpoint endpoint;
    private final ProxyTimer timer;
    private final Map<EventExecutor, ArrayDeque<Channel>> idle;
    private final AtomicInteger idleCount = new AtomicInteger();
    private volatile int maxIdle;
    private volatile Duration connectTimeout;
    private volatile Duration idleTimeout;
    private volatile boolean closed;

    UpstreamPool(UpstreamTransport transport, BackendEndpoint endpoint, int maxIdle, Duration connectTimeout,
                 Duration idleTimeout, ProxyTimer timer) {
        this.transport = transport;
        this.endpoint = endpoint;
        this.timer = timer;
        Map<EventExecutor, ArrayDeque<Channel>> m = new IdentityHashMap<>();
        for (EventExecutor e : transport.group) {
            m.put(e, new ArrayDeque<>());
        }
        this.idle = m; // never structurally modified after construction: safe to read from any thread
        reconfigure(maxIdle, connectTimeout, idleTimeout);
    }

    void reconfigure(int newMaxIdle, Duration newConnectTimeout, Duration newIdleTimeout) {
        this.maxIdle = Math.max(0, newMaxIdle);
        this.connectTimeout = newConnectTimeout;
        this.idleTimeout = newIdleTimeout;
    }

    BackendEndpoint endpoint() {
        return endpoint;
    }

    int idleCount() {
        return idleCount.get();
    }

    /** Must run on {@code loop}; the callback runs on it too. */
    void acquire(EventLoop loop, AcquireCallback cb) {
        ArrayDeque<Channel> q = idle.get(loop);
        if (q != null) {
            Channel ch;
            // Most recently returned first: the warmest connection is the least likely to be stale.
            while ((ch = q.pollLast()) != null) {
                idleCount.decrementAndGet();
                if (ch.isActive()) {
                    cb.onAcquired(ch, true);
                    return;
                }
            }
        }
        connect(loop, cb);
    }

    /**
     * A new connection, never a pooled one (used after a pooled one turned out stale), bounded by the connect
     * timeout on the proxy's timer ({@link RequestTimeouts#boundConnect}) rather than Netty's.
     */
    void connect(EventLoop loop, AcquireCallback cb) {
        ChannelFuture f = transport.connect(loop, endpoint.host(), endpoint.port(), Duration.ZERO, new Initializer());
        RequestTimeouts.boundConnect(timer, loop, f, connectTimeout);
        f.addListener(done -> {
            if (done.isSuccess()) {
                Channel ch = f.channel();
                ch.closeFuture().addListener(c -> forget(ch));
                cb.onAcquired(ch, false);
            } else {
                cb.onConnectFailed(done.cause());
            }
        });
    }

    /**
     * Returns a connection whose last response was read completely; runs on its event loop. It is
     * closed instead when the pool is closed or full.
     */
    void release(Channel ch) {
        UpstreamHandler h = ch.pipeline().get(UpstreamHandler.class);
        if (h != null) {
            h.detach();
        }
        ArrayDeque<Channel> q = idle.get(ch.eventLoop());
        if (closed || q == null || h == null || !ch.isActive() || !reserveIdleSlot()) {
            ch.close();
            return;
        }
        // Reading stays on while idle so a close or stray byte from the upstream is noticed.
        ch.config().setAutoRead(true);
        q.addLast(ch);
    }

    /**
     * Takes one of the {@code connection_pool_size} idle slots. Loops release concurrently, so a
     * separate check and increment would let two of them both see a free slot and overshoot the cap.
     */
    private boolean reserveIdleSlot() {
        while (true) {
            int n = idleCount.get();
            if (n >= maxIdle) {
                return false;
            }
            if (idleCount.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Stops pooling and closes every idle connection; in-flight ones close when released. */
    void close() {
        closed = true;
        for (Map.Entry<EventExecutor, ArrayDeque<Channel>> e : idle.entrySet()) {
            ArrayDeque<Channel> q = e.getValue();
            e.getKey().execute(() -> {
                Channel ch;
                while ((ch = q.pollLast()) != null) {
                    idleCount.decrementAndGet();
                    ch.close();
                }
            });
        }
    }

    private void forget(Channel ch) {
        ArrayDeque<Channel> q = idle.get(ch.eventLoop());
        if (q != null && q.remove(ch)) {
            idleCount.decrementAndGet();
        }
    }

    /** TLS (for https), idle detection, the HTTP/1.1 client codec, and the relay hook. */
    private final class Initializer extends ChannelInitializer<Channel> {
        @Override
        protected void initChannel(Channel ch) {
            ChannelPipeline p = ch.pipeline();
            if (endpoint.tls()) {
                p.addLast("tls", transport.ssl().newHandler(ch.alloc(), endpoint.host(), endpoint.port()));
            }
            // Reader idleness is what matters upstream (a silent pooled connection, or a response that
            // stopped mid-way); watching writes too would put a listener on every request write.
            p.addLast("idle", new IdleStateHandler(idleTimeout.toMillis(), 0, 0, TimeUnit.MILLISECONDS));
            UpstreamLimits limits = transport.limits;
            p.addLast("codec", new HttpClientCodec(new HttpDecoderConfig()
                    .setMaxInitialLineLength(limits.maxResponseInitialLineLength())
                    .setMaxHeaderSize(limits.maxResponseHeaderSize())
                    .setMaxChunkSize(limits.maxChunkSize())
                    .setTrailersFactory(SizedHeaders.TRAILERS), false, false));
            p.addLast(UpstreamHandler.NAME, new UpstreamHandler());
        }
    }
}
