package dev.continuum.router.app;

import dev.continuum.router.admin.AdminAuthenticator;
import dev.continuum.router.admin.AdminRoute;
import dev.continuum.router.admin.ConfigHistoryEndpoints;
import dev.continuum.router.admin.DecisionsEndpoint;
import dev.continuum.router.admin.DynamoWorkersEndpoint;
import dev.continuum.router.admin.FleetEvents;
import dev.continuum.router.admin.FleetPage;
import dev.continuum.router.admin.FleetRanksEndpoint;
import dev.continuum.router.admin.HealthRoute;
import dev.continuum.router.admin.MetricsRoute;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigStore;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadResult;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.http.HttpServer;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.core.lifecycle.LifecycleStack;
import dev.continuum.router.core.lifecycle.Lifecycles;
import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.eventbus.BrokerConnector;
import dev.continuum.router.eventbus.EventBusSupervisor;
import dev.continuum.router.kv.backend.KvCacheIndexSupervisor;
import dev.continuum.router.eventplane.ChannelDialer;
import dev.continuum.router.eventplane.nats.NatsConfig;
import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.replicas.ReplicaSync;
import dev.continuum.router.replicas.ReplicasConfig;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.kv.dispatch.KvRouting;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.kv.supervisor.KvSupervisor;
import dev.continuum.router.kv.prompt.HuggingFacePromptEncoder;
import dev.continuum.router.kv.prompt.PromptLimits;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.ShimDispatcher;
import dev.continuum.router.shim.decisions.DecisionLog;
import io.netty.handler.codec.http.HttpMethod;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running router: config store, metrics registry, Dynamo subsystems, HTTP server with its local
 * routes, file watcher. Every long-lived part is a lifecycle component pushed on one
 * {@link LifecycleStack} in dependency order; a failed start, {@link #close()}, and SIGTERM (through
 * the shutdown hook, which calls {@link #close()}) all stop them through the stack, in reverse.
 * The order is in docs/operations.md.
 */
final class RouterProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RouterProcess.class);

    private final LifecycleStack stack;
    private final ConfigStore store;
    private final HttpServer server;
    private final DiscoverySupervisor discovery;
    private final CountDownLatch stopped = new CountDownLatch(1);

    private RouterProcess(LifecycleStack stack, ConfigStore store, HttpServer server, DiscoverySupervisor discovery) {
        this.stack = stack;
        this.store = store;
        this.server = server;
        this.discovery = discovery;
    }

    DiscoverySupervisor discovery() {
        return discovery;
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
        return start(loader, sections, LifecycleStack.Listener.NONE, System::nanoTime);
    }

    /** As {@link #start(ConfigLoader, DynamoSections)}, telling {@code listener} each component's start and stop. */
    static RouterProcess start(ConfigLoader loader, DynamoSections sections, LifecycleStack.Listener listener) {
        return start(loader, sections, listener, System::nanoTime);
    }

    /**
     * As above, with the clock of the load store and the picker ({@code System::nanoTime} in production): a test
     * of the picker's timers moves it instead of waiting for them.
     */
    static RouterProcess start(ConfigLoader loader, DynamoSections sections, LongSupplier ticker) {
        return start(loader, sections, LifecycleStack.Listener.NONE, ticker);
    }

    private static RouterProcess start(ConfigLoader loader, DynamoSections sections, LifecycleStack.Listener listener,
                                       LongSupplier ticker) {
        LifecycleStack stack = new LifecycleStack(listener);
        try {
            return wire(stack, loader, sections, ticker);
        } catch (RuntimeException | Error e) {
            // A component that failed to start has already unwound the stack; a failure between pushes
            // (a builder refusing a value) has not. Either way the stack's stop is the one teardown.
            stack.stopAll().join();
            throw e;
        }
    }

    private static RouterProcess wire(LifecycleStack stack, ConfigLoader loader, DynamoSections sections,
                                      LongSupplier ticker) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ConfigStore store;
        try {
            store = ConfigStore.builder(loader).meterRegistry(registry).build();
        } catch (RuntimeException e) {
            registry.close();
            throw e;
        }
        RouterConfig config = store.current();
        // Before the first component logs "started", so every line of the run has the configured format.
        LoggingSetup.apply(config.logging());
        stack.push(Lifecycles.opening("meter registry", () -> registry::close));
        store.startupResult().warnings().forEach(w -> LOG.warn("config: {}", w));
        LOG.info("config loaded from {}", store.file() == null ? "built-in defaults" : store.file());
        if (!config.admin().enabled()) {
            LOG.warn("admin API disabled: add an admin.auth section to enable /admin/*");
        }
        stack.push(Lifecycles.opening("JVM metrics", () -> {
            new JvmMemoryMetrics().bindTo(registry);
            new JvmThreadMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
            JvmGcMetrics gcMetrics = new JvmGcMetrics();
            gcMetrics.bindTo(registry);
            return gcMetrics;
        }));
        // Admin and scrape calls may block (file reads, meter walks): a small named pool keeps them
        // off the event loops without a thread per call.
        OwnedExecutor blocking = stack.push(OwnedExecutor.fixed("continuum-blocking", 2));

        // Dynamo subsystems before the server: the registry exists (empty) even while discovery is off,
        // so the admin view and the pickers always have something to read.
        DiscoverySupervisor discovery = DiscoverySupervisor.builder().meterRegistry(registry).build();
        discovery.reload(config.dynamo().enabled(), config.dynamo().section(sections.discovery()));
        stack.push(discovery);
        // The event bus before the load supervisor, whose broker connector opens streams on its sessions.
        EventBusSupervisor bus = new EventBusSupervisor(registry);
        bus.reload(config.dynamo().enabled(), config.dynamo().section(sections.eventBus()));
        stack.push(bus);
        // The backend KV cache index's SSE sources, after the bus whose kv-listener sessions relay some of them.
        KvCacheIndexSupervisor kvCacheIndex = stack.push(new KvCacheIndexSupervisor(bus.bus(), registry,
                config.dynamo().section(sections.kvCacheIndex())));
        // The one NATS connection (dynamo.nats) that channels on the Nats transport subscribe through.
        NatsConnection nats = new NatsConnection(registry);
        nats.apply(natsConfig(config, sections));
        stack.push(nats);
        // The picker judges sample age on the load store's clock: both read this one ticker.
        LoadSupervisor load = stack.push(LoadSupervisor.builder(registry).ticker(ticker)
                .brokerConnector(() -> new BrokerConnector(bus.bus())).nats(nats)
                .config(config.dynamo().section(sections.load())).build());
        stack.push(Lifecycles.opening("load following discovery", () -> load.follow(discovery.registry())));
        // The picker's upkeep (candidate index per fleet view, the dispatch ledger's sweep) on its own
        // thread: after the load store and registry it reads, before the server that pins through it,
        // so the server drains before the upkeep stops.
        LoadBasedPicking picking = stack.push(
                LoadBasedPicking.create(load.store(), ticker, registry, discovery.registry()));
        // Replica sync (dynamo.replicas) on the shared NATS connection: peers' accounting in this picker's view.
        ReplicaSync replicas = new ReplicaSync(picking.activeSequences(), nats, registry, ticker);
        replicas.apply(replicasConfig(config, sections));
        stack.push(replicas);

        // The KV index (its single writer thread) and the kv-events subscriptions feeding it. Built whatever
        // dynamo.kv.enabled says, so a reload can turn KV routing on or off without touching discovery; KvRouting
        // (below) turns the subscriptions on while it is on.
        KvIndexWriter kvIndex = stack.push(new KvIndexWriter(registry, IndexLimits.DEFAULT));
        // kv-events dial as kv_metrics does: directly, or through the event bus under transport: broker.
        KvSupervisor kvEvents = stack.push(KvSupervisor.builder(kvIndex, registry).enabled(false) // KvRouting's switch
                .dialer(new ChannelDialer(ChannelDialer.DEFAULT.direct(), () -> new BrokerConnector(bus.bus()), nats))
                .load(config.dynamo().section(sections.load())).ticker(ticker).build());
        stack.push(Lifecycles.opening("kv-events following discovery", () -> kvEvents.follow(discovery.registry())));
        // Worker pinning: the shim dispatcher runs the whole dispatch and reads the live snapshot, load store and
        // shim config per request, so reloads need no re-wiring here.
        ShimDispatcher shim = ShimDispatcher.create(discovery.registry()::snapshot,
                () -> store.current().dynamo().section(sections.shim()), picking.picker(), registry);
        // Decision records (dynamo.decisions, read per request) and the x-continuum-decision-id header.
        DecisionLog decisions = new DecisionLog(() -> store.current().dynamo().section(sections.decisions()),
                registry);
        shim.recordDecisions(decisions);
        // Session affinity (x-dynamo-session-id): bindings kept, and shared with peers, by replica sync.
        shim.sessions(replicas.sessions());
        // The one owner of dynamo.kv: the KV prompt pipeline (artifact fetches, rendering, tokenizing: its own pools)
        // and, per config generation, the dispatcher's picker and prompt stage, the kv-events subscriptions, the
        // model warm-up and count_tokens. Before the server, so the server drains before it stops.
        KvRouting kv = stack.push(KvRouting.builder(config.dynamo().section(sections.kv()),
                        new HuggingFacePromptEncoder(PromptLimits.defaults(), registry, ticker,
                                Path.of(System.getProperty("java.io.tmpdir"), "continuum-djl")), registry)
                .environment(System.getenv()).ticker(ticker).fallbackCounter(new EstimatedTokens())
                .predicted(kvIndex.predicted())
                .build(shim, picking, kvIndex.overlap(), kvEvents, discovery.registry()::snapshot));
        // Approximate mode: the blocks each replica predicts travel to its peers (sampled) through replica sync.
        replicas.sharePredictions(kv.sharedPredictions());
        // broker_coverage and the debounced continuum_dynamo_broker_* gauges, over both families' subscriptions.
        BrokerCoverageWiring coverage = new BrokerCoverageWiring(registry, bus.bus(), discovery.registry(),
                store::current, sections, load, kvEvents);
        stack.push(Lifecycles.opening("broker coverage reporter", coverage));

        AtomicReference<HttpServer> serverRef = new AtomicReference<>();
        HealthRoute health = new HealthRoute(() -> serverRef.get() != null && serverRef.get().ready());
        AdminRoute.Builder adminRoutes = ConfigHistoryEndpoints.register(AdminRoute.builder(
                new AdminAuthenticator(() -> store.current().admin()),
                () -> store.renderer().tree(store.current()),
                store::reload), store)
                .endpoint("/admin/dynamo/workers", HttpMethod.GET,
                        new DynamoWorkersEndpoint(discovery.registry(), load, kvEvents, coverage::adminView,
                                kvCacheIndex::adminView, kv::modes));
        new DecisionsEndpoint(() -> decisions).register(adminRoutes);
        adminRoutes.endpoint(ReplicasEndpoint.PATH, HttpMethod.GET,
                new ReplicasEndpoint(replicas, () -> replicasConfig(store.current(), sections).enabled()));
        // The fleet page's event stream ticks on its own thread: started before the server, stopped after it.
        OwnedExecutor fleetEvents = stack.push(FleetEvents.ticker());
        FleetPage.register(adminRoutes.endpoint(FleetRanksEndpoint.PATH, HttpMethod.GET,
                new FleetRanksEndpoint(discovery.registry(), load.store())), registry, fleetEvents);
        AdminRoute admin = adminRoutes.build();
        // No builder grace: a stop drains for the running config's server.shutdown_grace_period.
        HttpServer server = HttpServer.builder(config, registry)
                .blockingExecutor(blocking.executor())
                // Anthropic Messages and Responses beside the OpenAI routes; count_tokens counts with the model's
                // pinned tokenizer (dynamo.kv) when it is loaded, else estimates.
                .proxyOptions(Ingresses.standard(ProxyOptions.defaults(), kv.tokenCounter()))
                .routeExact("/health", health)
                .routeExact("/healthz", health)
                .routeExact(config.metrics().endpoint(), new MetricsRoute(registry, () -> store.current().metrics()))
                .routePrefix("/admin/", admin)
                .build();
        serverRef.set(server);
        stack.push(server);
        // With dynamo.kv on, a model with pinned artifacts has its prompt encoded off the event loops first
        // (KvRouting's prompt stage); everything else takes the load-only shim dispatch.
        server.proxy().dispatchHook(shim);
        // backends[] requests for a model listed in dynamo.kv_cache_index.selection are steered by the backend KV
        // cache index (their prompt encoded by the same pipeline); others are picked by selection_strategy.
        server.proxy().backendChooser(kv.backendChooser(
                () -> store.current().dynamo().section(sections.kvCacheIndex()), kvCacheIndex.index(), registry));
        store.subscribe((before, after, plan) -> {
            server.apply(after);
            discovery.reload(after.dynamo().enabled(), after.dynamo().section(sections.discovery()));
            bus.reload(after.dynamo().enabled(), after.dynamo().section(sections.eventBus()));
            kvCacheIndex.reload(after.dynamo().section(sections.kvCacheIndex()));
            nats.apply(natsConfig(after, sections));
            replicas.apply(replicasConfig(after, sections));
            load.reconfigure(after.dynamo().section(sections.load()));
            kvEvents.reconfigure(after.dynamo().section(sections.load()));
            kv.reload(after.dynamo().section(sections.kv()));
            coverage.reloaded();
            LoggingSetup.apply(after.logging());
            LOG.info("config reloaded: {}", plan.changes());
        });
        // Last: the file watcher's reloads reach every component above, and it stops first.
        stack.push(store);
        LOG.info("continuum-router {} listening on {}", Main.version(), server.boundAddresses());
        return new RouterProcess(stack, store, server, discovery);
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

    /**
     * Graceful: the stack stops every component in reverse start order; the HTTP server's stop turns
     * readiness off, stops accepting and drains in-flight work up to the grace period. Idempotent; a
     * second caller (the shutdown hook after a close) waits for the same stop.
     */
    @Override
    public void close() {
        LOG.info("shutting down: draining in-flight requests for up to {}",
                store.current().server().shutdownGracePeriod());
        stack.stopAll().join();
        LOG.info("stopped");
        stopped.countDown();
    }

    /** {@code dynamo.replicas} while Dynamo is on; off while it is off. */
    private static ReplicasConfig replicasConfig(RouterConfig config, DynamoSections sections) {
        return config.dynamo().enabled() ? config.dynamo().section(sections.replicas()) : ReplicasConfig.DEFAULTS;
    }

    /** {@code dynamo.nats} while Dynamo is on; none (no connection) while it is off. */
    private static NatsConfig natsConfig(RouterConfig config, DynamoSections sections) {
        return config.dynamo().enabled() ? config.dynamo().section(sections.nats()) : NatsConfig.DEFAULTS;
    }
}
