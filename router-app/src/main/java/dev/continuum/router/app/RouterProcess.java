package dev.continuum.router.app;

import dev.continuum.router.admin.AdminAuthenticator;
import dev.continuum.router.admin.AdminRoute;
import dev.continuum.router.admin.DynamoWorkersEndpoint;
import dev.continuum.router.admin.HealthRoute;
import dev.continuum.router.admin.MetricsRoute;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigStore;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadResult;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.http.HttpServer;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.ShimDispatcher;
import io.netty.handler.codec.http.HttpMethod;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running router: config store, metrics registry, HTTP server with its local routes, file
 * watcher and signal handlers. Starts in dependency order and stops in reverse.
 */
final class RouterProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RouterProcess.class);

    private final ConfigStore store;
    private final PrometheusMeterRegistry registry;
    private final HttpServer server;
    private final JvmGcMetrics gcMetrics;
    private final ExecutorService blocking;
    private final DynamoSubsystems dynamo;
    private final CountDownLatch stopped = new CountDownLatch(1);

    private RouterProcess(ConfigStore store, PrometheusMeterRegistry registry, HttpServer server,
                          JvmGcMetrics gcMetrics, ExecutorService blocking, DynamoSubsystems dynamo) {
        this.store = store;
        this.registry = registry;
        this.server = server;
        this.gcMetrics = gcMetrics;
        this.blocking = blocking;
        this.dynamo = dynamo;
    }

    /** The Dynamo subsystems, stopped after the HTTP server and in reverse order of starting. */
    private record DynamoSubsystems(DiscoverySupervisor discovery, LoadSupervisor load, AutoCloseable following) {
        void close() {
            closeQuietly(following);
            load.stop().join();
            discovery.close();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("close failed", e);
        }
    }

    DiscoverySupervisor discovery() {
        return dynamo.discovery();
    }

    /** Runs until SIGTERM/SIGINT, then drains gracefully. Throws a ConfigException for a bad config. */
    static void run(ConfigLoader loader, DynamoSections sections) throws InterruptedException {
        RouterProcess process = start(loader, sections);
        Thread hook = new Thread(process::close, "continuum-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        Signals.onHangup(() -> process.reload("sighup"));
        process.stopped.await();
    }

    /** Loads and validates the config, then starts everything; listeners are bound on return. */
    static RouterProcess start(ConfigLoader loader, DynamoSections sections) {
        return start(loader, sections, System::nanoTime);
    }

    /**
     * As above, with the clock of the load store and the picker ({@code System::nanoTime} in production): a test
     * of the picker's timers moves it instead of waiting for them.
     */
    static RouterProcess start(ConfigLoader loader, DynamoSections sections, LongSupplier ticker) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ConfigStore store = ConfigStore.builder(loader).meterRegistry(registry).build();
        RouterConfig config = store.current();
        LoggingSetup.apply(config.logging());
        store.startupResult().warnings().forEach(w -> LOG.warn("config: {}", w));
        LOG.info("config loaded from {}", store.file() == null ? "built-in defaults" : store.file());
        if (!config.admin().enabled()) {
            LOG.warn("admin API disabled: add an admin.auth section to enable /admin/*");
        }

        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        JvmGcMetrics gcMetrics = new JvmGcMetrics();
        gcMetrics.bindTo(registry);

        // Dynamo subsystems first: the registry exists (empty) even while discovery is off, so the
        // admin view and, later, the pickers always have something to read.
        DiscoverySupervisor discovery = DiscoverySupervisor.builder().meterRegistry(registry).build();
        discovery.start(config.dynamo().enabled(), config.dynamo().section(sections.discovery()));
        // The picker judges sample age on the load store's clock: both read this one ticker.
        LoadSupervisor load = LoadSupervisor.builder(registry).ticker(ticker)
                .config(config.dynamo().section(sections.load())).build();
        AutoCloseable followingFleet = load.follow(discovery.registry());

        AtomicReference<HttpServer> serverRef = new AtomicReference<>();
        HealthRoute health = new HealthRoute(() -> serverRef.get() != null && serverRef.get().ready());
        AdminRoute admin = AdminRoute.builder(
                new AdminAuthenticator(() -> store.current().admin()),
                () -> store.renderer().tree(store.current()),
                store::reload)
                .endpoint("/admin/dynamo/workers", HttpMethod.GET,
                        new DynamoWorkersEndpoint(discovery.registry(), load))
                .build();
        // Admin and scrape calls may block (file reads, meter walks): a small named pool keeps them
        // off the event loops without a thread per call.
        ExecutorService blocking = Executors.newFixedThreadPool(2, daemonThreads("continuum-blocking"));
        HttpServer server = HttpServer.builder(config, registry)
                .blockingExecutor(blocking)
                .routeExact("/health", health)
                .routeExact("/healthz", health)
                .routeExact(config.metrics().endpoint(), new MetricsRoute(registry, () -> store.current().metrics()))
                .routePrefix("/admin/", admin)
                .build();
        serverRef.set(server);
        try {
            server.start();
        } catch (RuntimeException e) {
            closeQuietly(followingFleet);
            load.stop().join();
            discovery.close();
            store.close();
            blocking.shutdownNow();
            throw e;
        }
        // Worker pinning: the shim dispatcher reads the live snapshot, load store and shim config per
        // request, so reloads need no re-wiring here.
        DynamoWorkerPicker picker = DynamoWorkerPicker.loadBased(load.store(), ticker, registry);
        server.proxy().dispatchHook(ShimDispatcher.create(discovery.registry()::snapshot,
                () -> store.current().dynamo().section(sections.shim()), picker, registry));
        store.subscribe((before, after, plan) -> {
            server.apply(after);
            discovery.reload(after.dynamo().enabled(), after.dynamo().section(sections.discovery()));
            load.reconfigure(after.dynamo().section(sections.load()));
            LoggingSetup.apply(after.logging());
            LOG.info("config reloaded: {}", plan.changes());
        });
        store.startWatching();
        LOG.info("continuum-router {} listening on {}", Main.version(), server.boundAddresses());
        return new RouterProcess(store, registry, server, gcMetrics, blocking,
                new DynamoSubsystems(discovery, load, followingFleet));
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Returns once {@link #close} has finished (from a shutdown hook, say). */
    void awaitStopped() throws InterruptedException {
        stopped.await();
    }

    List<SocketAddress> boundAddresses() {
        return server.boundAddresses();
    }

    HttpServer server() {
        return server;
    }

    ReloadResult reload(String trigger) {
        ReloadResult result = store.reload(trigger);
        for (Problem p : result.errors()) {
            LOG.error("config reload ({}) refused: {}", trigger, p);
        }
        return result;
    }

    /** Graceful: readiness off, stop accepting, drain in-flight work up to the grace period, then stop. */
    @Override
    public void close() {
        if (stopped.getCount() == 0) {
            return;
        }
        Duration grace = store.current().server().shutdownGracePeriod();
        LOG.info("shutting down: draining in-flight requests for up to {}", grace);
        try {
            server.shutdown(grace).get(grace.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warn("shutdown did not complete cleanly", e);
        } finally {
            dynamo.close();
            store.close();
            blocking.shutdownNow();
            gcMetrics.close();
            registry.close();
            LOG.info("stopped");
            stopped.countDown();
        }
    }
}
