package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.ApiKeyAuthenticator;
import dev.continuum.router.proxy.auth.RateLimits;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.RetryConfig;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.metrics.BackendMeters;
import dev.continuum.router.proxy.metrics.ProxyMetrics;
import io.netty.channel.EventLoopGroup;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ProxyService}: one {@link AtomicReference} to the current {@link ProxyState} for the
 * request path (readers never lock); {@link #apply} is serialized with a monitor because it is
 * rare, off the request path, and must build resources exactly once per backend.
 */
final class DefaultProxyService implements ProxyService {
    private static final Logger log = LoggerFactory.getLogger(DefaultProxyService.class);

    final ProxyMetrics metrics;
    final ProxyOptions options;
    private final EventLoopGroup group;
    private final UpstreamTransport transport;
    private final ProbeClient probes;
    private final ProxyRoutes routes;
    private final AtomicReference<ProxyState> state = new AtomicReference<>();
    private final LongAdder pauses = new LongAdder();
    /** Guarded by {@code this}. */
    private Map<String, BackendResources> resources = new HashMap<>();
    private volatile boolean closed;
    private volatile @org.jspecify.annotations.Nullable DispatchHook dispatchHook;
    private volatile @org.jspecify.annotations.Nullable BackendChooser backendChooser;

    DefaultProxyService(RouterConfig config, ProxyMetrics metrics, EventLoopGroup group, boolean epoll,
                        ProxyOptions options) {
        this.metrics = metrics;
        this.options = options;
        this.group = group;
        this.transport = new UpstreamTransport(group, epoll, options.upstreamLimits(), options.upstreamTls());
        this.probes = new ProbeClient(transport);
        this.routes = ProxyRoutes.of(options.ingresses());
        apply(config);
    }

    @Override
    public synchronized void apply(RouterConfig config) {
        if (closed) {
            throw new IllegalStateException("proxy is closed");
        }
        ProxyState previous = state.get();
        Map<String, BackendResources> next = new LinkedHashMap<>();
        List<BackendResources> retired = new ArrayList<>();
        for (BackendConfig b : config.backends()) {
            BackendResources r = resources.get(b.name());
            if (r != null && r.url.equals(b.url())) {
                r.breaker.reconfigure(config.circuitBreaker());
                r.health.reconfigure(b.effectiveHealthCheck(config.healthChecks()), b.apiKey(), connectTimeout(config));
                r.pool.reconfigure(config.server().connectionPoolSize(), connectTimeout(config),
                        config.server().idleTimeout());
                next.put(b.name(), r);
            } else if (r != null) {
                retired.add(r);
            }
        }
        for (Map.Entry<String, BackendResources> e : resources.entrySet()) {
            if (!next.containsKey(e.getKey()) && !retired.contains(e.getValue())) {
                retired.add(e.getValue());
            }
        }
        // Retire first: a replaced backend's meters must be gone before its successor registers
        // series with the same name.
        for (BackendResources r : retired) {
            log.info("backend {} removed or replaced: stopping its probes and closing idle connections", r.name);
            r.close();
        }
        List<BackendResources> started = new ArrayList<>();
        List<Backend> backends = new ArrayList<>();
        for (BackendConfig b : config.backends()) {
            BackendResources r = next.get(b.name());
            if (r == null) {
                r = createResources(b, config);
                next.put(b.name(), r);
                started.add(r);
            }
            backends.add(new Backend(backends.size(), b, r));
        }
        RetryConfig rc = config.retry();
        RetryBudget budget = previous != null && previous.retryBudget.sameSettings(rc.budgetRatio(),
                rc.budgetMinPerSecond()) ? previous.retryBudget
                : new RetryBudget(rc.budgetRatio(), rc.budgetMinPerSecond(), options.nanoClock());
        ApiKeyAuthenticator auth = ApiKeyAuthenticator.create(config.apiKeys(), options.wallClock());
        RateLimits limits = RateLimits.create(config.rateLimiting(), config.apiKeys().keys(),
                previous == null ? null : previous.limits, options.nanoClock(), options.rateLimitLimits());
        state.set(new ProxyState(config, backends, auth, limits, budget, options.wallClock().instant().getEpochSecond()));
        resources = next;
        for (BackendResources r : started) {
            r.health.start();
        }
    }

    private BackendResources createResources(BackendConfig b, RouterConfig config) {
        BackendEndpoint endpoint = BackendEndpoint.of(b.url());
        CircuitBreaker breaker = CircuitBreaker.create(config.circuitBreaker(), options.nanoClock());
        HealthChecker health = new HealthChecker(b.name(), endpoint, probes, group.next(), options.nanoClock(),
                b.effectiveHealthCheck(config.healthChecks()), b.apiKey(), connectTimeout(config));
        UpstreamPool pool = new UpstreamPool(transport, endpoint, config.server().connectionPoolSize(),
                connectTimeout(config), config.server().idleTimeout(), options.timer());
        BackendMeters meters = metrics.registerBackend(b.name(),
                () -> health.healthState().routable() ? 1 : 0,
                () -> breaker.state().gaugeValue());
        return new BackendResources(b.name(), b.url(), endpoint, breaker, health, pool, meters);
    }

    /** {@code timeouts.connection}, else {@code server.connect_timeout}. */
    private static java.time.Duration connectTimeout(RouterConfig config) {
        return config.timeouts().connect(config.server());
    }

    private ProxyState current() {
        return Objects.requireNonNull(state.get(), "the constructor applies the first config");
    }

    @Override
    public RouterConfig config() {
        return current().config;
    }

    @Override
    public List<BackendStatus> backends() {
        List<BackendStatus> out = new ArrayList<>();
        for (Backend b : current().backends) {
            BackendResources r = b.resources();
            out.add(new BackendStatus(b.name(), b.config().url(), b.config().enabled(), b.config().internal(),
                    r.health.healthState(), r.breaker.state(), r.pool.idleCount(), r.health.reportedModels()));
        }
        return out;
    }

    @Override
    public @org.jspecify.annotations.Nullable ProxyRoute route(String path) {
        return routes.find(path);
    }

    @Override
    public RelayControl handle(ClientExchange exchange) {
        ProxyExchange e = new ProxyExchange(this, current(), exchange);
        e.start();
        return e;
    }

    @Override
    public void dispatchHook(@org.jspecify.annotations.Nullable DispatchHook hook) {
        this.dispatchHook = hook;
    }

    @org.jspecify.annotations.Nullable DispatchHook dispatchHook() {
        return dispatchHook;
    }

    @Override
    public void backendChooser(@org.jspecify.annotations.Nullable BackendChooser chooser) {
        this.backendChooser = chooser;
    }

    @org.jspecify.annotations.Nullable BackendChooser backendChooser() {
        return backendChooser;
    }

    @Override
    public long upstreamReadPauses() {
        return pauses.sum();
    }

    void countPause() {
        pauses.increment();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (BackendResources r : resources.values()) {
            r.health.stop();
            r.pool.close();
        }
        transport.close();
    }
}
