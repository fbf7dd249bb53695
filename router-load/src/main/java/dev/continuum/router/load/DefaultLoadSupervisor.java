package dev.continuum.router.load;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.load.zmtp.Transport;
import dev.continuum.router.load.zmtp.ZmtpConnector;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load supervisor. Writers ({@link #update}, {@link #reconfigure}, start and stop) hold the monitor;
 * {@link #running} is a concurrent map so gauges and the admin view read it without the monitor.
 *
 * <p>Owns what it starts: its event loop (unless one was given), the thread that follows the registry and
 * the dial connector; the store and the meters exist from construction so they can be wired before start.
 */
final class DefaultLoadSupervisor extends StartStopSupport implements LoadSupervisor {
    private static final Logger LOG = LoggerFactory.getLogger(DefaultLoadSupervisor.class);

    /** Ascending publisher_id (unsigned), then namespace: the admission order of docs/load-signals.md. */
    static final Comparator<DynamoPublisher> ADMISSION_ORDER = Comparator
            .<DynamoPublisher>comparingLong(p -> p.id().publisherId() ^ Long.MIN_VALUE)
            .thenComparing(DynamoPublisher::namespace);

    private final ConcurrentLoadStore store;
    private final LoadMetrics metrics;
    private final @Nullable EventLoopGroup givenGroup;
    private final LoadSupervisor.Builder settings;
    private final KvMetricsSubscription.Context context;
    private final ConcurrentHashMap<PublisherId, KvMetricsSubscription> running = new ConcurrentHashMap<>();
    private final OwnedExecutor followExecutor = OwnedExecutor.fixed("load-supervisor", 1);
    private @Nullable EventLoopGroup group;

    private LoadConfig config;
    private @Nullable ZmtpConnector connector;
    private LoadTargets targets = LoadTargets.EMPTY;
    private volatile int loadPublishers;
    private boolean capLogged;
    private boolean stopped;

    DefaultLoadSupervisor(LoadSupervisor.Builder b) {
        this.settings = b;
        this.store = new ConcurrentLoadStore(b.ticker, b.maxStoreEntries);
        this.metrics = new LoadMetrics(b.meterRegistry, store, this::count);
        store.listener(metrics);
        this.givenGroup = b.eventLoopGroup;
        this.context = new KvMetricsSubscription.Context(store, metrics, b.limits, b.backoff, b.random);
        this.config = b.config;
        store.maxStaleness(config.maxStaleness());
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        group = givenGroup != null ? givenGroup
                : new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("continuum-load"), NioIoHandler.newFactory());
        followExecutor.start().join();
        connector = connectorFor(config);
        return CompletableFuture.completedFuture(null);
    }

    private EventLoopGroup group() {
        EventLoopGroup g = group;
        if (g == null) {
            throw new IllegalStateException("load supervisor not started");
        }
        return g;
    }

    private @Nullable ZmtpConnector connectorFor(LoadConfig c) {
        if (c.transport() == Transport.DIRECT) {
            return settings.directConnector.apply(c.dialPolicy());
        }
        if (settings.brokerConnector != null) {
            return settings.brokerConnector.apply(c);
        }
        LOG.warn("dynamo.load.transport is broker but this build has no event bus: kv_metrics subscriptions "
                + "stay pending and workers get no load samples");
        return null;
    }

    @Override
    public LoadStore store() {
        return store;
    }

    LoadMetrics metrics() {
        return metrics;
    }

    private int count(SubscriptionState state, Transport transport) {
        int n = 0;
        for (KvMetricsSubscription s : running.values()) {
            if (s.state() == state && s.transport() == transport) {
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized void update(LoadTargets next) {
        if (stopped) {
            return;
        }
        group(); // fails before the start: there is nothing to run subscriptions on
        targets = next;
        loadPublishers = next.publishers().size();
        // The gate first: samples of departed workers go now, and none can enter after this returns.
        store.setLiveAndRetain(next.liveWorkers());

        List<DynamoPublisher> ordered = new ArrayList<>(next.publishers());
        ordered.sort(ADMISSION_ORDER);
        if (ordered.size() > settings.maxSubscriptions) {
            if (!capLogged) {
                capLogged = true;
                LOG.warn("{} kv_metrics publishers exceed the cap of {} subscriptions; the lowest publisher IDs "
                        + "are subscribed, the rest are not", ordered.size(), settings.maxSubscriptions);
            }
            ordered = ordered.subList(0, settings.maxSubscriptions);
        } else {
            capLogged = false;
        }
        Map<PublisherId, DynamoPublisher> desired = new HashMap<>();
        for (DynamoPublisher p : ordered) {
            desired.putIfAbsent(p.id(), p);
        }
        for (var entry : List.copyOf(running.entrySet())) {
            DynamoPublisher wanted = desired.get(entry.getKey());
            if (wanted == null || !wanted.equals(entry.getValue().publisher())) {
                // Departed (its samples go with it) or modified (a new subscription reconnects and drops them).
                running.remove(entry.getKey());
                stopWithGrace(entry.getValue(), wanted == null);
            }
        }
        for (DynamoPublisher p : ordered) {
            if (!running.containsKey(p.id())) {
                startSubscription(p);
            }
        }
    }

    private void startSubscription(DynamoPublisher p) {
        Transport transport = config.transport();
        KvMetricsSubscription s = new KvMetricsSubscription(p, connector, transport, group().next(), context);
        running.put(p.id(), s);
        s.start();
    }

    private CompletableFuture<Void> stopWithGrace(KvMetricsSubscription s, boolean dropSamples) {
        CompletableFuture<Void> done = s.stop(dropSamples);
        group().next().schedule(() -> {
            if (!done.isDone()) {
                LOG.warn("kv_metrics subscription {} did not stop within {}; aborting it", s.publisher().id(),
                        settings.stopGrace);
                s.abort();
            }
        }, settings.stopGrace.toNanos(), TimeUnit.NANOSECONDS);
        return done;
    }

    @Override
    public synchronized void reconfigure(LoadConfig next) {
        if (stopped) {
            return;
        }
        LoadConfig before = config;
        config = next;
        store.maxStaleness(next.maxStaleness());
        // Before the start there is nothing to restart: the start dials under the new config.
        if (group == null || !before.restartsSubscriptions(next)) {
            return;
        }
        LOG.info("dynamo.load transport or direct_allow_cidrs changed: restarting {} kv_metrics subscriptions",
                running.size());
        List<KvMetricsSubscription> old = List.copyOf(running.values());
        running.clear();
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (KvMetricsSubscription s : old) {
            stopping.add(stopWithGrace(s, false));
        }
        ZmtpConnector previous = connector;
        connector = connectorFor(next);
        if (previous != null) {
            // Closed only once the old subscriptions are down: a resolution in flight still needs its pool.
            CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> previous.close());
        }
        update(targets);
    }

    @Override
    public AutoCloseable follow(DynamoRegistry registry) {
        var executor = followExecutor.executor();
        DynamoRegistry.Subscription subscription = registry.subscribe(executor,
                generation -> update(LoadTargets.from(registry.snapshot())));
        executor.execute(() -> update(LoadTargets.from(registry.snapshot())));
        return subscription::close;
    }

    @Override
    public List<SubscriptionView> subscriptions() {
        return running.values().stream().map(KvMetricsSubscription::view)
                .sorted(Comparator.comparing(SubscriptionView::namespace)
                        .thenComparing(v -> v.publisherId() ^ Long.MIN_VALUE))
                .toList();
    }

    @Override
    public int loadPublishers() {
        return loadPublishers;
    }

    /**
     * Stops every subscription (each within the stop grace), then closes the connector, removes the meters
     * and shuts down the follow thread and the owned event loop; completes when those threads have ended.
     */
    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        stopped = true;
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (KvMetricsSubscription s : running.values()) {
            stopping.add(stopWithGrace(s, false));
        }
        running.clear();
        ZmtpConnector c = connector;
        connector = null;
        CompletableFuture<Void> following = followExecutor.stop();
        EventLoopGroup owned = givenGroup == null ? group : null;
        return CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new))
                .orTimeout(settings.stopGrace.toMillis() + 1_000, TimeUnit.MILLISECONDS)
                .handle((v, e) -> {
                    if (c != null) {
                        c.close();
                    }
                    metrics.close();
                    return null;
                })
                .thenCompose(ignored -> following)
                .thenCompose(ignored -> {
                    CompletableFuture<Void> loops = new CompletableFuture<>();
                    if (owned == null) {
                        loops.complete(null);
                    } else {
                        owned.shutdownGracefully(0, 1, TimeUnit.SECONDS).addListener(f -> loops.complete(null));
                    }
                    return loops;
                });
    }

    @Override
    protected String lifecycleName() {
        return "load supervisor";
    }

    /** Test hook: the running subscription of a publisher. */
    @Nullable KvMetricsSubscription subscription(PublisherId id) {
        return running.get(id);
    }

    Duration stopGrace() {
        return settings.stopGrace;
    }
}
