package dev.continuum.router.proxy;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.metrics.ProxyMetrics;
import io.netty.channel.EventLoopGroup;
import java.util.List;

/**
 * The generic OpenAI-wire proxy: backends, selection, health checks, circuit breakers, retries,
 * API keys and rate limits, and the upstream relay. The HTTP server hands it each
 * {@code /v1/chat/completions}, {@code /v1/completions} and {@code /v1/models} request, and each request
 * on a registered ingress ({@link ProxyOptions#withIngress}), through {@link #handle}.
 *
 * <p>Hot reload: {@link #apply} builds a new immutable generation and publishes it atomically;
 * new requests use it, in-flight ones finish on the generation they started with. A backend
 * whose name and URL are unchanged keeps its health state, breaker state, idle connections and
 * meters; a removed backend's probes stop, its idle connections close and its series are removed.
 */
public interface ProxyService extends AutoCloseable {

    /**
     * Builds the proxy and starts health checks. Upstream connections are opened on
     * {@code group}'s event loops ({@code epoll} says which transport the group runs).
     */
    static ProxyService create(RouterConfig config, ProxyMetrics metrics, EventLoopGroup group, boolean epoll,
                               ProxyOptions options) {
        return new DefaultProxyService(config, metrics, group, epoll, options);
    }

    /** Swaps in a new configuration for new requests. Thread-safe; callers are serialized. */
    void apply(RouterConfig config);

    RouterConfig config();

    /** A snapshot view of every configured backend, in configuration order. */
    List<BackendStatus> backends();

    /** The route the proxy answers at {@code path} (a built-in OpenAI route or a registered ingress), or null. */
    @org.jspecify.annotations.Nullable ProxyRoute route(String path);

    /**
     * Takes over one request (see {@link ClientExchange} for ownership). Must be called on the
     * client channel's event loop; the returned control receives that connection's events.
     */
    RelayControl handle(ClientExchange exchange);

    /**
     * Installs (or, with null, removes) the hook that may pin chat completions to upstream-side workers;
     * takes effect for requests that start afterwards. See {@link DispatchHook}.
     */
    void dispatchHook(@org.jspecify.annotations.Nullable DispatchHook hook);

    /**
     * Installs (or, with null, removes) the chooser that may pick among a standard-path chat request's
     * candidates; takes effect for requests that start afterwards. See {@link BackendChooser}.
     */
    void backendChooser(@org.jspecify.annotations.Nullable BackendChooser chooser);

    /** Times a relay stopped reading an upstream because the client could not keep up (diagnostic). */
    long upstreamReadPauses();

    /** Stops every health check and closes idle upstream connections; later requests get 503. */
    @Override
    void close();
}
