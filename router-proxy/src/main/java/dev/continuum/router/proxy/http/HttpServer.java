package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.lifecycle.Lifecycle;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.ProxyService;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
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
 * server.start().join();                // binds every listener, fails if one cannot be bound
 * server.apply(newConfig);              // hot reload (listeners are not rebound)
 * server.stop().join();                 // graceful, within the shutdown grace
 * }</pre>
 *
 * <p>{@link #start()} binds every listener before its future completes (a failure releases what
 * was bound and the future fails). {@link #stop()} is the graceful shutdown: readiness off,
 * listeners closed (new connections are refused, unix socket files deleted), idle keep-alive
 * connections closed now and busy ones after their current response ({@code Connection: close}),
 * in-flight requests and streams given up to the shutdown grace, then everything still open is
 * closed and the event loops stop; the future completes when they have. The grace is the
 * builder's {@link Builder#shutdownGrace} when set, else {@code server.shutdown_grace_period} of
 * the config last applied.
 */
public interface HttpServer extends Lifecycle {

    static Builder builder(RouterConfig config, MeterRegistry registry) {
        return new NettyHttpServer.ServerBuilder(config, registry);
    }

    /** The bound addresses, in configuration order (TCP port 0 resolved to the real port). */
    List<SocketAddress> boundAddresses();

    /** True from a successful start until the stop begins. */
    boolean ready();

    ProxyService proxy();

    /**
     * Applies a new configuration to new requests and new connections (limits, timeouts,
     * backends, keys, rate limits...). Listeners are not rebound: a changed {@code bind_address}
     * needs a restart.
     */
    void apply(RouterConfig config);

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

        /** How long a stop lets in-flight work finish; default: the config's {@code shutdown_grace_period}. */
        Builder shutdownGrace(Duration grace);

        HttpServer build();
    }
}
