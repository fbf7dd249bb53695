package dev.continuum.router.discovery;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An event publisher a subscription can target: a direct ZMQ channel with a {@code tcp://} endpoint.
 *
 * @param id        namespace (from the watched prefix) and publisher ID
 * @param topic     {@code kv_metrics} or {@code kv-events}
 * @param component the channel's component, or null for a namespace-scoped channel
 * @param endpoint  the channel's endpoint name, or null unless endpoint-scoped
 * @param address   the {@code tcp://host:port} to dial; internal, never exported by the admin API or metrics
 */
public record DynamoPublisher(
        PublisherId id,
        PublisherTopic topic,
        @Nullable String component,
        @Nullable String endpoint,
        String address) {

    public DynamoPublisher {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(address, "address");
    }

    public String namespace() {
        return id.namespace();
    }

    @Override
    public String toString() {
        // Never print the address: log lines may leave the cluster.
        return "DynamoPublisher[" + id + ", " + topic.wireName() + ", component=" + component + "]";
    }
}
