package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelDialer;
import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.eventplane.SubscriptionSet;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load supervisor: the kv_metrics family's {@link SubscriptionSet} feeding the load store. Writers
 * ({@link #update}, {@link #reconfigure}, start and stop) hold the monitor; gauges and the admin view read
 * the set without it.
 *
 * <p>Owns what it starts: its event loop (unless one was given), the thread that follows the registry and
 * the dial connector; the store and the meters exist from construction so they can be wired before start.
 */
final class DefaultLoadSupervisor extends StartStopSupport implements LoadSupervisor {
    private static final Logger LOG = LoggerFactory.getLogger(DefaultLoadSupervisor.class);

    private final ConcurrentLoadStore store;
    private final LoadMetrics metrics;
    private final @Nullable EventLoopGroup givenGroup;
    private final LoadSupervisor.Builder settings;
    private final ChannelDialer dialer;
    private final SubscriptionSet running;
    private final OwnedExecutor followExecutor = OwnedExecutor.fixed("load-supervisor", 1);
    private @Nullable EventLoopGroup group;

    private LoadConfig config;
    private @Nullable ZmtpConnector connector;
    private LoadTargets targets = LoadTargets.EMPTY;
    private volatile int loadPublishers;
    private boolean stopped;

    DefaultLoadSupervisor(LoadSupervisor.Builder b) {
        this.settings = b;
        this.store = new ConcurrentLoadStore(b.ticker, b.maxStoreEntries);
        this.running = new SubscriptionSet(new ChannelSubscription.Settings(KvMetricsSubscription.FAMILY, b.limits,
                b.backoff, b.random, store::now), p -> new KvMetricsSubscription(p, store, metrics()),
                b.maxSubscriptions, b.stopGrace);
        this.metrics = new LoadMetrics(b.meterRegistry, store, running::count);
        store.listener(metrics);
        this.givenGroup = b.eventLoopGroup;
        this.dialer = new ChannelDialer(b.directConnector, b.brokerConnector, b.nats);
        running.useNats(b.nats);
        this.config = b.config;
        store.maxStaleness(config.maxStaleness());
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        group = givenGroup != null ? givenGroup
                : new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("continuum-load"), NioIoHandler.newFactory());
        followExecutor.start().join();
        connector = dialer.connectorFor(config.transport(), config.dialPolicy(), KvMetricsSubscription.FAMILY);
        return CompletableFuture.completedFuture(null);
    }

    private EventLoopGroup group() {
        EventLoopGroup g = group;
        if (g == null) {
            throw new IllegalStateException("load supervisor not started");
        }
        return g;
    }

    @Override
    public LoadStore store() {
        return store;
    }

    LoadMetrics metrics() {
        return metrics;
    }

    @Override
    public synchronized void update(LoadTargets next) {
        if (stopped) {
            return;
        }
        EventLoopGroup g = group(); // fails before the start: there is nothing to run subscriptions on
        targets = next;
        loadPublishers = next.publishers().size();
        // The gate first: samples of departed workers go now, and none can enter after this returns.
        store.setLiveAndRetain(next.liveWorkers());
        running.update(next.publishers(), connector, config.transport(), g);
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
        running.stopAllClosing(group(), connector);
        connector = dialer.connectorFor(next.transport(), next.dialPolicy(), KvMetricsSubscription.FAMILY);
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
        return running.views();
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
        ZmtpConnector c = connector;
        connector = null;
        return running.shutdown(group, c, metrics::close, followExecutor.stop(), givenGroup == null ? group : null);
    }

    @Override
    protected String lifecycleName() {
        return "load supervisor";
    }

    /** Test hook: the running subscription of a publisher. */
    @Nullable ChannelSubscription subscription(PublisherId id) {
        return running.get(id);
    }

    Duration stopGrace() {
        return settings.stopGrace;
    }
}
