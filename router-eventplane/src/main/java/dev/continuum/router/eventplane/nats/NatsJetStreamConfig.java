package dev.continuum.router.eventplane.nats;

import java.util.Objects;

/**
 * {@code dynamo.nats.jetstream}: the fleet keeps its kv-events in a JetStream stream, and this router reads them
 * with durable consumers of its own (docs/nats.md, "JetStream").
 *
 * @param kvEventsStream the stream holding the kv-events subjects
 * @param consumerPrefix this router's durable consumers' name prefix; unique per router replica, since replicas
 *                       sharing a durable consumer would split its messages between them
 */
public record NatsJetStreamConfig(String kvEventsStream, String consumerPrefix) {
    public NatsJetStreamConfig {
        Objects.requireNonNull(kvEventsStream, "kvEventsStream");
        Objects.requireNonNull(consumerPrefix, "consumerPrefix");
    }

    /** The durable consumer of one publisher's subscription: the prefix and the publisher ID in hex. */
    public String durable(long publisherId) {
        return consumerPrefix + "-" + Long.toHexString(publisherId);
    }
}
