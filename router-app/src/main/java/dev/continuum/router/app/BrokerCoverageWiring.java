package dev.continuum.router.app;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.eventbus.BrokerCoverage;
import dev.continuum.router.eventbus.BrokerCoverageReporter;
import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.BusRole;
import dev.continuum.router.eventplane.ChannelFamilyView;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Connects the broker coverage to the router's parts: the admin view's {@code broker_coverage} (computed per
 * request from the live sessions and subscriptions) and the debounced gauge reporter, signalled by the bus's
 * session changes, discovery's generations and reloads. Opened as one lifecycle component after the load and
 * KV supervisors; the reporter's timer is its own scheduler thread.
 */
final class BrokerCoverageWiring implements Callable<AutoCloseable> {
    private final MeterRegistry meters;
    private final EventBus bus;
    private final DynamoRegistry registry;
    private final Supplier<RouterConfig> config;
    private final DynamoSections sections;
    private final LoadSupervisor load;
    private final ChannelFamilyView kvEvents;
    private volatile @Nullable BrokerCoverageReporter reporter;

    BrokerCoverageWiring(MeterRegistry meters, EventBus bus, DynamoRegistry registry, Supplier<RouterConfig> config,
                         DynamoSections sections, LoadSupervisor load, ChannelFamilyView kvEvents) {
        this.meters = meters;
        this.bus = bus;
        this.registry = registry;
        this.config = config;
        this.sections = sections;
        this.load = load;
        this.kvEvents = kvEvents;
    }

    private BrokerCoverageReporter.Scope scope() {
        RouterConfig c = config.get();
        boolean broker = c.dynamo().section(sections.load()).transport() == Transport.BROKER;
        List<String> brokerIds = new ArrayList<>();
        for (BrokerEntry e : c.dynamo().section(sections.eventBus()).brokers()) {
            if (e.role() == BusRole.BROKER) {
                brokerIds.add(e.id());
            }
        }
        return new BrokerCoverageReporter.Scope(broker, registry.snapshot().namespaces(), brokerIds);
    }

    private List<SubscriptionView> subscriptions() {
        List<SubscriptionView> all = new ArrayList<>(load.subscriptions());
        all.addAll(kvEvents.subscriptions());
        return all;
    }

    /** {@code broker_coverage} now: one entry per configured namespace, or null under the direct transport. */
    @Nullable Object adminView() {
        BrokerCoverageReporter.Scope s = scope();
        if (!s.brokerTransport()) {
            return null;
        }
        return BrokerCoverage.of(s.namespaces(), BrokerCoverage.carriers(bus), subscriptions()).stream()
                .map(BrokerCoverage::toJson).toList();
    }

    /** A reload happened: the label sets or the transport may have changed. */
    void reloaded() {
        BrokerCoverageReporter r = reporter;
        if (r != null) {
            r.signal();
        }
    }

    @Override
    public AutoCloseable call() {
        OwnedExecutor timer = OwnedExecutor.scheduler("broker-coverage", Duration.ZERO);
        timer.start().join();
        BrokerCoverageReporter r = new BrokerCoverageReporter(meters, this::scope,
                () -> BrokerCoverage.carriers(bus), this::subscriptions,
                (task, delay) -> timer.scheduledExecutor().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS));
        AutoCloseable sessions = bus.onSessionsChanged(r::signal);
        DynamoRegistry.Subscription generations = registry.subscribe(Runnable::run, g -> r.signal());
        reporter = r;
        r.signal();
        return () -> {
            reporter = null;
            sessions.close();
            generations.close();
            r.close();
            timer.stop().join();
        };
    }
}
