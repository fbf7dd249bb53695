package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BusRole;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Which configured Dynamo namespaces the broker sessions cover, and how many broker-transport subscriptions
 * wait for one: {@code broker_coverage} of {@code GET /admin/dynamo/workers} and the source of the broker
 * gauges. A pure function of the namespaces, the carrying sessions and the subscriptions; it names only
 * configuration ({@code brokers[].id}), never an address or a session.
 *
 * @param namespace        a configured Dynamo namespace
 * @param brokers          {@code brokers[].id} of the live, non-draining broker sessions that declared it, sorted
 * @param pendingKvMetrics broker-transport kv_metrics subscriptions of the namespace in state {@code pending}
 * @param pendingKvEvents  the same for kv-events
 */
public record BrokerCoverage(String namespace, List<String> brokers, int pendingKvMetrics, int pendingKvEvents) {
    /** The two channel families, as subscriptions and gauges name them. */
    public static final String KV_METRICS = "kv_metrics";
    public static final String KV_EVENTS = "kv-events";

    public BrokerCoverage {
        Objects.requireNonNull(namespace, "namespace");
        brokers = List.copyOf(brokers);
    }

    /** Whether at least one broker session carries the namespace now. */
    public boolean covered() {
        return !brokers.isEmpty();
    }

    /** One session able to carry streams: its {@code brokers[].id} and the namespaces its hello declared. */
    public record Carrier(String brokerId, Collection<String> namespaces) {
    }

    /** The live, non-draining broker sessions of {@code bus}. */
    public static List<Carrier> carriers(EventBus bus) {
        List<Carrier> out = new ArrayList<>();
        for (BusSession s : bus.sessions()) {
            if (s.role() == BusRole.BROKER && s.isLive() && !s.isDraining()) {
                out.add(new Carrier(s.entryId(), s.namespaces()));
            }
        }
        return out;
    }

    /**
     * One entry per configured namespace, in configuration order. Subscriptions of other namespaces, and
     * direct-transport ones, are not counted.
     */
    public static List<BrokerCoverage> of(List<String> namespaces, List<Carrier> carriers,
                                          List<SubscriptionView> subscriptions) {
        List<BrokerCoverage> out = new ArrayList<>(namespaces.size());
        for (String ns : namespaces) {
            TreeSet<String> brokers = new TreeSet<>();
            for (Carrier c : carriers) {
                if (c.namespaces().contains(ns)) {
                    brokers.add(c.brokerId());
                }
            }
            int metrics = 0;
            int events = 0;
            for (SubscriptionView s : subscriptions) {
                if (s.transport() == Transport.BROKER && s.state() == SubscriptionState.PENDING
                        && s.namespace().equals(ns)) {
                    if (KV_METRICS.equals(s.family())) {
                        metrics++;
                    } else if (KV_EVENTS.equals(s.family())) {
                        events++;
                    }
                }
            }
            out.add(new BrokerCoverage(ns, List.copyOf(brokers), metrics, events));
        }
        return out;
    }

    /** Pending subscriptions of one family ({@link #KV_METRICS} or {@link #KV_EVENTS}). */
    public int pending(String family) {
        return KV_METRICS.equals(family) ? pendingKvMetrics : KV_EVENTS.equals(family) ? pendingKvEvents : 0;
    }

    /** The admin view's entry: {@code {"namespace", "covered", "brokers", "pending_subscriptions"}}. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", namespace);
        out.put("covered", covered());
        out.put("brokers", brokers);
        out.put("pending_subscriptions", pendingKvMetrics + pendingKvEvents);
        return out;
    }
}
