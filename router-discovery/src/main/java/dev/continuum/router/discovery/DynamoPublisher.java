package dev.continuum.router.discovery;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An event publisher a subscription can target: a direct ZMQ channel with a {@code tcp://} endpoint, or a NATS
 * channel whose address is {@link #NATS_ADDRESS_PREFIX} and its subject prefix (docs/nats.md).
 *
 * @param id        namespace (from the watched prefix) and publisher ID
 * @param topic     {@code kv_metrics} or {@code kv-events}
 * @param component the channel's component, or null for a namespace-scoped channel
 * @param endpoint  the channel's endpoint name, or null unless endpoint-scoped
 * @param address   the {@code tcp://host:port} to dial, or {@code nats-subject:<subject_prefix>}; internal, never
 *                  exported by the admin API or metrics
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

    /** The address of a channel on the {@code Nats} transport, followed by its subject prefix. */
    public static final String NATS_ADDRESS_PREFIX = "nats-subject:";

    /** Whether this channel is on the {@code Nats} transport (subscribed through the NATS connection). */
    public boolean isNats() {
        return address.startsWith(NATS_ADDRESS_PREFIX);
    }

    /** The subject prefix of a NATS channel ({@code namespace.dynamo...}); the subject is it, a dot and the topic. */
    public String natsSubjectPrefix() {
        if (!isNats()) {
            throw new IllegalStateException("not a NATS channel");
        }
        return address.substring(NATS_ADDRESS_PREFIX.length());
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
