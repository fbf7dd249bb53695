package dev.continuum.router.eventplane;

import dev.continuum.router.eventplane.Transport;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One running subscription as the admin API lists it. Carries no address: the admin API never shows a
 * publisher's {@code tcp://} endpoint.
 *
 * @param family      {@code kv_metrics} here ({@code kv-events} for the KV module's subscriptions)
 * @param publisherId the publisher incarnation's ID (unsigned)
 * @param namespace   the Dynamo namespace it was discovered in
 * @param component   the channel's component, or null for a namespace-scoped channel
 * @param broker      the {@code brokers[].id} carrying a broker-transport subscription while it is connected
 *                    (configuration, safe to show), else null
 */
public record SubscriptionView(String family, long publisherId, String namespace, @Nullable String component,
                               SubscriptionState state, Transport transport, @Nullable String broker) {
    public SubscriptionView {
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(transport, "transport");
    }

    /** A subscription no broker carries. */
    public SubscriptionView(String family, long publisherId, String namespace, @Nullable String component,
                            SubscriptionState state, Transport transport) {
        this(family, publisherId, namespace, component, state, transport, null);
    }
}
