package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ServerConfig;
import dev.continuum.router.proxy.metrics.ProxyMetrics;
import dev.continuum.router.proxy.ProxyService;
import io.netty.channel.Channel;
import io.netty.util.internal.PlatformDependent;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** What every connection of one server shares; the open-connection registry for shutdown. */
final class ServerContext {
    final ProxyService proxy;
    final ProxyMetrics metrics;
    final LocalRoutes routes;
    final Executor blockingExecutor;
    final IngressLimits limits;
    final LongSupplier nanoClock;
    final Set<Channel> connections = ConcurrentHashMap.newKeySet();
    /** Connections admitted under {@code max_connections} (refused ones are not counted). */
    final AtomicInteger admitted = new AtomicInteger();
    /** Request body bytes every connection together holds, against {@code max_buffered_request_size}. */
    final AtomicLong bufferedBytes = new AtomicLong();
    /** The first out-of-memory condition is logged at WARN, later ones at DEBUG (the metric counts all). */
    final AtomicBoolean outOfMemoryLogged = new AtomicBoolean();
    final IngressMetrics ingressMetrics;
    private final long directMemoryLimit;
    /** Completes when shutdown has begun and the last connection closed. */
    final CompletableFuture<Void> drained = new CompletableFuture<>();
    volatile boolean closing;

    ServerContext(ProxyService proxy, ProxyMetrics metrics, LocalRoutes routes, Executor blockingExecutor,
                  IngressLimits limits, LongSupplier nanoClock) {
        this.proxy = proxy;
        this.metrics = metrics;
        this.routes = routes;
        this.blockingExecutor = blockingExecutor;
        this.limits = limits;
        this.nanoClock = nanoClock;
        this.ingressMetrics = new IngressMetrics(metrics.registry(), admitted, bufferedBytes);
        this.directMemoryLimit = PlatformDependent.maxDirectMemory();
    }

    /** {@code max_buffered_request_size}, or when unset half the direct-memory limit (at least one maximal body). */
    long bufferBudget(ServerConfig config) {
        ByteSize set = config.maxBufferedRequestSize();
        if (set != null) {
            return set.bytes();
        }
        return Math.max(config.maxRequestBodySize().bytes(), directMemoryLimit / 2);
    }

    /** Limits and timeouts for a new connection: read per connection, so a reload applies to new ones. */
    ServerConfig serverConfig() {
        return proxy.config().server();
    }

    void register(Channel ch) {
        connections.add(ch);
        ch.closeFuture().addListener(f -> {
            connections.remove(ch);
            checkDrained();
        });
    }

    void checkDrained() {
        if (closing && connections.isEmpty()) {
            drained.complete(null);
        }
    }
}
