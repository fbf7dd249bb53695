package dev.continuum.router.eventbus;

import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Exports the broker gauges from {@link BrokerCoverage}, at most once per {@link #DEBOUNCE}: a change signal
 * (a session welcomed, ended or draining, a registry generation, a reload) arms one report {@code DEBOUNCE}
 * later and every further signal meanwhile joins it, so a broker bringing hundreds of streams up produces a
 * handful of reports, not one per stream. Subscription states have no signal of their own; while any
 * broker-transport subscription is still on its way (connecting, backing off, or pending in a namespace that
 * is now covered) each report arms the next one, and once everything has settled the reporter sleeps until
 * the next signal.
 *
 * <p>Label sets are closed by configuration: {@code namespace} takes the configured Dynamo namespaces,
 * {@code broker} the configured {@code brokers[].id} of role broker, {@code family} the two channel families.
 * A session or subscription outside them is not exported. The gauges exist only under
 * {@code dynamo.load.transport: broker}; a reload that changes the sets replaces the series.
 *
 * <p>Reports run on the injected timer's thread, one at a time; {@link #signal} is lock-free and may be called
 * from any thread.
 */
public final class BrokerCoverageReporter implements AutoCloseable {
    /** The quiet time between a change and its report. */
    public static final Duration DEBOUNCE = Duration.ofMillis(250);
    /** {@code continuum_dynamo_broker_namespace_sessions{namespace}}. */
    static final String NAMESPACE_SESSIONS = "continuum.dynamo.broker.namespace.sessions";
    /** {@code continuum_dynamo_broker_pending_subscriptions{family,namespace}}. */
    static final String PENDING_SUBSCRIPTIONS = "continuum.dynamo.broker.pending.subscriptions";
    /** {@code continuum_dynamo_broker_subscriptions{family,broker}}. */
    static final String SUBSCRIPTIONS = "continuum.dynamo.broker.subscriptions";
    private static final List<String> FAMILIES = List.of(BrokerCoverage.KV_METRICS, BrokerCoverage.KV_EVENTS);

    /** What is exported: decided by configuration alone. */
    public record Scope(boolean brokerTransport, List<String> namespaces, List<String> brokerIds) {
        public static final Scope NONE = new Scope(false, List.of(), List.of());

        public Scope {
            namespaces = List.copyOf(namespaces);
            brokerIds = List.copyOf(brokerIds);
        }
    }

    /** Runs a task once after a delay (a scheduled executor in production, virtual time in tests). */
    @FunctionalInterface
    public interface Timer {
        void schedule(Runnable task, Duration delay);
    }

    private final MeterRegistry registry;
    private final Supplier<Scope> scope;
    private final Supplier<List<BrokerCoverage.Carrier>> carriers;
    private final Supplier<List<SubscriptionView>> subscriptions;
    private final Timer timer;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final List<Meter> meters = new ArrayList<>();
    /** Gauge values by label key (see {@link #sessionsKey}, {@link #pendingKey}, {@link #carriedKey}). */
    private final Map<String, AtomicInteger> values = new HashMap<>();
    private Scope exported = Scope.NONE;
    private boolean closed;

    public BrokerCoverageReporter(MeterRegistry registry, Supplier<Scope> scope,
                                  Supplier<List<BrokerCoverage.Carrier>> carriers,
                                  Supplier<List<SubscriptionView>> subscriptions, Timer timer) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.scope = Objects.requireNonNull(scope, "scope");
        this.carriers = Objects.requireNonNull(carriers, "carriers");
        this.subscriptions = Objects.requireNonNull(subscriptions, "subscriptions");
        this.timer = Objects.requireNonNull(timer, "timer");
    }

    /** Something changed: a report follows {@link #DEBOUNCE} from the first signal not yet reported. */
    public void signal() {
        if (armed.compareAndSet(false, true)) {
            timer.schedule(this::report, DEBOUNCE);
        }
    }

    synchronized void report() {
        armed.set(false); // a signal during this report arms the next one
        if (closed) {
            return;
        }
        Scope now = scope.get();
        if (!now.equals(exported)) {
            export(now);
        }
        if (!now.brokerTransport()) {
            return;
        }
        List<BrokerCoverage.Carrier> live = carriers.get();
        List<SubscriptionView> subs = subscriptions.get();
        List<BrokerCoverage> coverage = BrokerCoverage.of(now.namespaces(), live, subs);
        for (BrokerCoverage c : coverage) {
            set(sessionsKey(c.namespace()), c.brokers().size());
            for (String family : FAMILIES) {
                set(pendingKey(family, c.namespace()), c.pending(family));
            }
        }
        Map<String, Integer> carried = new HashMap<>();
        boolean settling = false;
        for (SubscriptionView s : subs) {
            if (s.transport() != Transport.BROKER) {
                continue;
            }
            if (s.broker() != null) {
                carried.merge(carriedKey(s.family(), s.broker()), 1, Integer::sum);
            }
            settling |= s.state() == SubscriptionState.CONNECTING || s.state() == SubscriptionState.BACKOFF
                    || s.state() == SubscriptionState.PENDING && covered(coverage, s.namespace());
        }
        for (String family : FAMILIES) {
            for (String broker : now.brokerIds()) {
                String key = carriedKey(family, broker);
                set(key, carried.getOrDefault(key, 0));
            }
        }
        if (settling) {
            signal();
        }
    }

    private static boolean covered(List<BrokerCoverage> coverage, String namespace) {
        for (BrokerCoverage c : coverage) {
            if (c.namespace().equals(namespace)) {
                return c.covered();
            }
        }
        return false; // not a configured namespace: nothing will change for it
    }

    // Label values never contain a newline, so these keys cannot collide across the three gauges.
    private static String sessionsKey(String namespace) {
        return "s\n" + namespace;
    }

    private static String pendingKey(String family, String namespace) {
        return "p\n" + family + '\n' + namespace;
    }

    private static String carriedKey(String family, String broker) {
        return "b\n" + family + '\n' + broker;
    }

    private void set(String key, int value) {
        AtomicInteger holder = values.get(key);
        if (holder != null) {
            holder.set(value);
        }
    }

    private void export(Scope next) {
        removeMeters();
        exported = next;
        if (!next.brokerTransport()) {
            return;
        }
        for (String ns : next.namespaces()) {
            meters.add(Gauge.builder(NAMESPACE_SESSIONS, holder(sessionsKey(ns)), AtomicInteger::get)
                    .description("Live, non-draining broker sessions covering the Dynamo namespace")
                    .tag("namespace", ns).register(registry));
            for (String family : FAMILIES) {
                meters.add(Gauge.builder(PENDING_SUBSCRIPTIONS, holder(pendingKey(family, ns)), AtomicInteger::get)
                        .description("Broker-transport subscriptions waiting for a broker to cover their namespace")
                        .tag("family", family).tag("namespace", ns).register(registry));
            }
        }
        for (String broker : next.brokerIds()) {
            for (String family : FAMILIES) {
                meters.add(Gauge.builder(SUBSCRIPTIONS, holder(carriedKey(family, broker)), AtomicInteger::get)
                        .description("Connected subscriptions carried by the broker")
                        .tag("family", family).tag("broker", broker).register(registry));
            }
        }
    }

    private AtomicInteger holder(String key) {
        return values.computeIfAbsent(key, k -> new AtomicInteger());
    }

    private void removeMeters() {
        meters.forEach(registry::remove);
        meters.clear();
        values.clear();
    }

    /** Removes the gauges; later signals and reports do nothing. */
    @Override
    public synchronized void close() {
        closed = true;
        removeMeters();
        exported = Scope.NONE;
    }
}
