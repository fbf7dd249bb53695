package dev.continuum.router.discovery.watch;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.lifecycle.StartStopSupport;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.DiscoveryReloadPlan;
import dev.continuum.router.discovery.config.RestartReason;
import dev.continuum.router.discovery.metrics.DiscoveryMetrics;
import dev.continuum.router.discovery.reducer.DiscoveryLimits;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.discovery.source.WatchSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Control operations (start, reload, stop) are serialized by {@code this}; at most one watcher holds the
 * registry's writer at a time, and stopping one waits at most the stop grace.
 *
 * <p>Owns the scheduler that closes etcd clients a moment after their watches end (see the etcd reader):
 * started with the supervisor, stopped after the last watcher, so the last delayed closes still run.
 */
final class WatcherSupervisor extends StartStopSupport implements DiscoverySupervisor {
    private static final Logger LOG = LoggerFactory.getLogger(WatcherSupervisor.class);

    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final DiscoveryMetrics metrics;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final WatchSourceFactory sourceFactory;
    private final Duration seedTimeout;
    private final Duration stopGrace;
    private final DiscoveryLimits limits;
    private final OwnedExecutor etcdCloser;

    private boolean started;
    private boolean closed;
    private boolean enabled;
    private DiscoveryConfig config = DiscoveryConfig.defaults();
    private @Nullable DiscoveryWatcher watcher;

    /** @param sourceFactory the sources to watch, or null for the production ones (on this clock and limits) */
    WatcherSupervisor(MeterRegistry meterRegistry, Clock clock, LongSupplier nanoTime,
                      @Nullable WatchSourceFactory sourceFactory, Duration seedTimeout, Duration stopGrace,
                      DiscoveryLimits limits) {
        this.metrics = DiscoveryMetrics.bind(meterRegistry, registry);
        this.clock = clock;
        this.nanoTime = nanoTime;
        // Delayed client closes are a second or so; the grace only bounds a close that hangs.
        this.etcdCloser = OwnedExecutor.scheduler("dynamo-discovery-etcd-closer", stopGrace);
        this.sourceFactory = sourceFactory != null ? sourceFactory
                : new DefaultWatchSources(clock, limits, etcdCloser::scheduledExecutor);
        this.seedTimeout = seedTimeout;
        this.stopGrace = stopGrace;
        this.limits = limits;
    }

    @Override
    public DynamoRegistry registry() {
        return registry;
    }

    @Override
    protected synchronized CompletableFuture<Void> doStart() {
        etcdCloser.start().join();
        started = true;
        if (enabled) {
            startWatcher(FleetView.empty(), false);
        } else {
            LOG.info("Dynamo discovery is disabled");
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized DiscoveryReloadPlan reload(boolean newEnabled, DiscoveryConfig newConfig) {
        DiscoveryReloadPlan plan = DiscoveryReloadPlan.of(enabled, config, newEnabled, newConfig);
        if (!started || closed) {
            enabled = newEnabled;
            config = newConfig;
            return plan;
        }
        FleetView current = registry.snapshot().fleet();
        switch (plan.action()) {
            case NOTHING -> {
            }
            case STOP -> {
                stopWatcher();
                registry.reconfigure(false, newConfig.source(), newConfig.namespaces(), FleetView.empty());
                LOG.info("Dynamo discovery stopped");
            }
            case REPLACE_RESETTING, REPLACE_PRUNING, REPLACE_KEEPING_SNAPSHOT -> {
                RestartReason reason = Objects.requireNonNull(plan.reason()); // every REPLACE plan names one
                LOG.info("restarting Dynamo discovery (reason={})", reason.label());
                metrics.increment(DiscoveryEventKind.RESTART);
                stopWatcher();
                enabled = newEnabled;
                config = newConfig;
                FleetView kept = switch (plan.action()) {
                    case REPLACE_PRUNING -> current.retainNamespaces(newConfig.namespaces());
                    case REPLACE_KEEPING_SNAPSHOT -> current;
                    default -> FleetView.empty();
                };
                startWatcher(kept, true);
            }
        }
        enabled = newEnabled;
        config = newConfig;
        return plan;
    }

    /** Must hold {@code this}. */
    private void startWatcher(FleetView kept, boolean carryOver) {
        MutableDynamoRegistry.Writer writer =
                registry.reconfigure(true, config.source(), config.namespaces(), kept);
        WatchSource source;
        try {
            source = sourceFactory.create(config, metrics);
        } catch (RuntimeException e) {
            LOG.error("Dynamo discovery cannot start: {}", e.getMessage());
            return;
        }
        DiscoveryReducer reducer = DiscoveryReducer.create(config.namespaces(), limits, clock, metrics,
                carryOver ? kept : FleetView.empty());
        DiscoveryWatcher next = new DiscoveryWatcher(source, reducer, writer, new Backoff(config.backoff()),
                seedTimeout, nanoTime);
        watcher = next;
        LOG.info("Dynamo discovery from {}", source.describe());
        next.start();
    }

    /** Must hold {@code this}. */
    private void stopWatcher() {
        DiscoveryWatcher running = watcher;
        watcher = null;
        if (running == null) {
            return;
        }
        try {
            if (!running.stop(stopGrace)) {
                LOG.warn("a Dynamo discovery watcher did not stop within {} ms; abandoned (its writes are revoked)",
                        stopGrace.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Seeds completed by the current watcher (tests wait for a replacement's first resync with it). */
    synchronized long completedSeeds() {
        return watcher == null ? 0 : watcher.completedSeeds();
    }

    /** Blocks up to the stop grace while the watcher stops; the closer's wait runs on its own thread. */
    @Override
    protected synchronized CompletableFuture<Void> doStop() {
        closed = true;
        stopWatcher();
        DynamoSnapshot snapshot = registry.snapshot();
        // Readers may still look during shutdown: keep the view, mark it disconnected, revoke all writers.
        registry.reconfigure(snapshot.enabled(), snapshot.source(), snapshot.namespaces(), snapshot.fleet());
        metrics.close();
        return etcdCloser.stop();
    }

    @Override
    protected String lifecycleName() {
        return "Dynamo discovery";
    }
}
