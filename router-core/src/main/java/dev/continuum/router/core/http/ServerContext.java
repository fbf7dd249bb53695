package dev.continuum.router.core.http;

import dev.continuum.router.core.config.ServerConfig;
import dev.continuum.router.core.metrics.ProxyMetrics;
import dev.continuum.router.core.proxy.ProxyService;
import io.netty.channel.Channel;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
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
