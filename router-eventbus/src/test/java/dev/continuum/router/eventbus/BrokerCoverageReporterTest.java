package dev.continuum.router.eventbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The debounced broker gauges on virtual time: one report per {@link BrokerCoverageReporter#DEBOUNCE} however
 * many signals, label sets closed by configuration, re-reports while subscriptions settle, and the series
 * replaced or removed on reloads.
 */
class BrokerCoverageReporterTest {
    private static final BrokerCoverageReporter.Scope SCOPE = new BrokerCoverageReporter.Scope(true,
            List.of("dynamo", "batch"), List.of("broker-a", "broker-b"));

    /** Tasks run only inside {@link #advance}, in due order. */
    private static final class VirtualTimer implements BrokerCoverageReporter.Timer {
        private record Task(long due, long seq, Runnable run) {
        }

        private final List<Task> tasks = new ArrayList<>();
        private long now;
        private long seq;

        @Override
        public void schedule(Runnable task, Duration delay) {
            tasks.add(new Task(now + delay.toNanos(), seq++, task));
        }

        void advance(Duration by) {
            long until = now + by.toNanos();
            while (true) {
                Task next = tasks.stream().filter(t -> t.due() <= until)
                        .min(Comparator.comparingLong(Task::due).thenComparingLong(Task::seq)).orElse(null);
                if (next == null) {
                    break;
                }
                tasks.remove(next);
                now = next.due();
                next.run().run();
            }
            now = until;
        }

        int scheduled() {
            return tasks.size();
        }
    }

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final VirtualTimer timer = new VirtualTimer();
    private final AtomicReference<BrokerCoverageReporter.Scope> scope = new AtomicReference<>(SCOPE);
    private final AtomicReference<List<BrokerCoverage.Carrier>> carriers = new AtomicReference<>(List.of());
    private final AtomicReference<List<SubscriptionView>> subscriptions = new AtomicReference<>(List.of());
    private final BrokerCoverageReporter reporter = new BrokerCoverageReporter(meters, scope::get, carriers::get,
            subscriptions::get, timer);

    private static SubscriptionView sub(String family, long id, String ns, SubscriptionState state,
                                        String broker) {
        return new SubscriptionView(family, id, ns, "decode", state, Transport.BROKER, broker);
    }

    private double gauge(String name, Map<String, String> tags) {
        var search = meters.find(name);
        for (var e : tags.entrySet()) {
            search = search.tag(e.getKey(), e.getValue());
        }
        Gauge g = search.gauge();
        return g == null ? Double.NaN : g.value();
    }

    private double sessions(String ns) {
        return gauge(BrokerCoverageReporter.NAMESPACE_SESSIONS, Map.of("namespace", ns));
    }

    private double pending(String family, String ns) {
        return gauge(BrokerCoverageReporter.PENDING_SUBSCRIPTIONS, Map.of("family", family, "namespace", ns));
    }

    private double carried(String family, String broker) {
        return gauge(BrokerCoverageReporter.SUBSCRIPTIONS, Map.of("family", family, "broker", broker));
    }

    @Test
    void manySignalsMakeOneReportAfterTheQuietTime() {
        subscriptions.set(List.of(sub("kv_metrics", 1, "dynamo", SubscriptionState.PENDING, null),
                sub("kv-events", 2, "dynamo", SubscriptionState.PENDING, null)));
        for (int i = 0; i < 100; i++) {
            reporter.signal();
        }
        assertThat(timer.scheduled()).isEqualTo(1);
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).gauges()).isEmpty();

        timer.advance(Duration.ofMillis(249));
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).gauges()).isEmpty();
        timer.advance(Duration.ofMillis(1));

        assertThat(sessions("dynamo")).isZero();
        assertThat(sessions("batch")).isZero();
        assertThat(pending("kv_metrics", "dynamo")).isEqualTo(1);
        assertThat(pending("kv-events", "dynamo")).isEqualTo(1);
        assertThat(pending("kv_metrics", "batch")).isZero();
        assertThat(carried("kv_metrics", "broker-a")).isZero();
        // Pending with nothing covering the namespace is settled: no further report until a signal.
        assertThat(timer.scheduled()).isZero();
    }

    @Test
    void aBrokerArrivingIsReportedAndTheReporterFollowsTheSubscriptionsUntilTheySettle() {
        subscriptions.set(List.of(sub("kv_metrics", 1, "dynamo", SubscriptionState.PENDING, null)));
        reporter.signal();
        timer.advance(Duration.ofMillis(250));
        assertThat(pending("kv_metrics", "dynamo")).isEqualTo(1);

        carriers.set(List.of(new BrokerCoverage.Carrier("broker-a", List.of("dynamo"))));
        reporter.signal(); // the session change
        timer.advance(Duration.ofMillis(250));
        assertThat(sessions("dynamo")).isEqualTo(1);
        // Still pending (its wake-up jitter) in a covered namespace: the reporter looks again without a signal.
        assertThat(timer.scheduled()).isEqualTo(1);

        subscriptions.set(List.of(sub("kv_metrics", 1, "dynamo", SubscriptionState.CONNECTED, "broker-a")));
        timer.advance(Duration.ofMillis(250));
        assertThat(pending("kv_metrics", "dynamo")).isZero();
        assertThat(carried("kv_metrics", "broker-a")).isEqualTo(1);
        assertThat(carried("kv_metrics", "broker-b")).isZero();
        assertThat(timer.scheduled()).isZero();
    }

    @Test
    void labelsOutsideTheConfigurationAreNotExported() {
        carriers.set(List.of(new BrokerCoverage.Carrier("broker-z", List.of("dynamo", "elsewhere"))));
        subscriptions.set(List.of(sub("kv_metrics", 1, "elsewhere", SubscriptionState.PENDING, null),
                sub("kv_metrics", 2, "dynamo", SubscriptionState.CONNECTED, "broker-z")));
        reporter.signal();
        timer.advance(Duration.ofMillis(250));

        assertThat(sessions("dynamo")).isEqualTo(1);
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).gauges()).hasSize(2);
        assertThat(meters.find(BrokerCoverageReporter.PENDING_SUBSCRIPTIONS).gauges()).hasSize(4);
        assertThat(meters.find(BrokerCoverageReporter.SUBSCRIPTIONS).gauges()).hasSize(4);
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).tag("namespace", "elsewhere").gauge())
                .isNull();
        assertThat(meters.find(BrokerCoverageReporter.SUBSCRIPTIONS).tag("broker", "broker-z").gauge()).isNull();
    }

    @Test
    void aReloadReplacesTheSeriesAndTheDirectTransportRemovesThem() {
        reporter.signal();
        timer.advance(Duration.ofMillis(250));
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).gauges()).hasSize(2);

        scope.set(new BrokerCoverageReporter.Scope(true, List.of("dynamo"), List.of("broker-a")));
        reporter.signal();
        timer.advance(Duration.ofMillis(250));
        assertThat(meters.find(BrokerCoverageReporter.NAMESPACE_SESSIONS).gauges()).hasSize(1);
        assertThat(meters.find(BrokerCoverageReporter.SUBSCRIPTIONS).gauges()).hasSize(2);

        scope.set(new BrokerCoverageReporter.Scope(false, List.of("dynamo"), List.of("broker-a")));
        reporter.signal();
        timer.advance(Duration.ofMillis(250));
        assertThat(meters.getMeters()).isEmpty();
    }

    @Test
    void closingRemovesTheGaugesAndLaterReportsDoNothing() {
        reporter.signal();
        timer.advance(Duration.ofMillis(250));
        reporter.signal();
        reporter.close();
        timer.advance(Duration.ofMillis(250));

        assertThat(meters.getMeters()).isEmpty();
    }

    @Test
    void coverageNamesOnlyConfiguredNamespacesAndCountsOnlyBrokerPendingSubscriptions() {
        List<BrokerCoverage> coverage = BrokerCoverage.of(List.of("dynamo", "batch"),
                List.of(new BrokerCoverage.Carrier("broker-b", List.of("dynamo")),
                        new BrokerCoverage.Carrier("broker-a", List.of("dynamo"))),
                List.of(sub("kv_metrics", 1, "batch", SubscriptionState.PENDING, null),
                        sub("kv-events", 2, "batch", SubscriptionState.PENDING, null),
                        new SubscriptionView("kv_metrics", 3, "batch", null, SubscriptionState.PENDING,
                                Transport.DIRECT)));

        assertThat(coverage).extracting(BrokerCoverage::toJson).containsExactly(
                Map.of("namespace", "dynamo", "covered", true, "brokers", List.of("broker-a", "broker-b"),
                        "pending_subscriptions", 0),
                Map.of("namespace", "batch", "covered", false, "brokers", List.of(),
                        "pending_subscriptions", 2));
    }
}
