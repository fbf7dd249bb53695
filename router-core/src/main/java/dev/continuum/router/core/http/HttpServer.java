package dev.continuum.router.core.http;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.proxy.ProxyOptions;
import dev.continuum.router.core.proxy.ProxyService;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The router's HTTP/1.1 ingress: listens on every {@code server.bind_address} (TCP and
 * {@code unix:} sockets), proxies the OpenAI routes through {@link ProxyService}, and answers
 * registered {@link LocalRoute}s.
 *
 * <pre>{@code
 * HttpServer server = HttpServer.builder(config, meterRegistry)
 *         .routeExact("/health", healthRoute)
 *         .routePrefix("/admin/", adminRoute)
 *         .build();
 * server.start();                       // binds every listener, throws if one fails
 * server.apply(newConfig);              // hot reload (listeners are not rebound)
 * server.shutdown(Duration.ofSeconds(30)).join();
 * }</pre>
 */
public interface HttpServer {

    static Builder builder(RouterConfig config, MeterRegistry registry) {
        return new NettyHttpServer.ServerBuilder(config, registry);
    }

    /** Creates the event loops and the proxy, binds every listener; ready afterwards. */
    void start();

    /** The bound addresses, in configuration order (TCP port 0 resolved to the real port). */
    List<SocketAddress> boundAddresses();

    /** True from a successful start until shutdown begins. */
    boolean ready();

    ProxyService proxy();

    /**
     * Applies a new configuration to new requests and new connections (limits, timeouts,
     * backends, keys, rate limits...). Listeners are not rebound: a changed {@code bind_address}
     * needs a restart.
     */
    void apply(RouterConfig config);

    /**
     * Graceful shutdown: readiness off; for {@code server.shutdown_quiet_period} (at most
     * {@code grace}) the listeners still accept, so health checks see the 503; then listeners
     * closed (new connections are refused, unix socket files deleted), idle keep-alive connections closed now and busy ones after their
     * current response ({@code Connection: close}), in-flight requests and streams given up to
     * the rest of {@code grace}, then everything still open is closed and the event loops stop. Idempotent:
     * later calls return the same future.
     */
    CompletableFuture<Void> shutdown(Duration grace);

    interface Builder {
        /** Answers {@code path} exactly (query excluded). */
        Builder routeExact(String path, LocalRoute route);

        /** Answers every path starting with {@code prefix}; the longest matching prefix wins. */
        Builder routePrefix(String prefix, LocalRoute route);

        /** Where {@link LocalRoute#blocking()} routes run; default: the common fork-join pool. */
        Builder blockingExecutor(Executor executor);

        /** Clocks and upstream bounds (tests inject clocks here). */
        Builder proxyOptions(ProxyOptions options);

        Builder ingressLimits(IngressLimits limits);

        HttpServer build();
    }
}
