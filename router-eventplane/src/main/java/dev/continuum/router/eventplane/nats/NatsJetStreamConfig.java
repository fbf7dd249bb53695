package dev.continuum.router.eventplane.nats;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code dynamo.nats.jetstream}: the fleet keeps its kv-events in a JetStream stream, and this router reads them
 * with durable consumers of its own (docs/nats.md, "JetStream").
 *
 * @param kvEventsStream the stream holding the kv-events subjects
 * @param consumerPrefix this router's durable consumers' name prefix; unique per router replica, since replicas
 *                       sharing a durable consumer would split its messages between them
 * @param ackWait        how long the server waits for this router's acknowledgement of a kv-event before it
 *                       delivers it again (a redelivered event the router applied already is dropped by its cursor)
 */
public record NatsJetStreamConfig(String kvEventsStream, String consumerPrefix, Duration ackWait) {
    /**
     * {@code ack_wait}'s default: an acknowledgement lost with a stopping connection holds its message back this
     * long (the server's own default is 30 s, which a restarting router would wait out).
     */
    public static final Duration DEFAULT_ACK_WAIT = Duration.ofSeconds(5);
    public static final Duration MIN_ACK_WAIT = Duration.ofSeconds(1);
    public static final Duration MAX_ACK_WAIT = Duration.ofMinutes(10);

    public NatsJetStreamConfig {
        Objects.requireNonNull(kvEventsStream, "kvEventsStream");
        Objects.requireNonNull(consumerPrefix, "consumerPrefix");
        Objects.requireNonNull(ackWait, "ackWait");
    }

    /** With the default {@code ack_wait}. */
    public NatsJetStreamConfig(String kvEventsStream, String consumerPrefix) {
        this(kvEventsStream, consumerPrefix, DEFAULT_ACK_WAIT);
    }

    /** The durable consumer of one publisher's subscription: the prefix and the publisher ID in hex. */
    public String durable(long publisherId) {
        return consumerPrefix + "-" + Long.toHexString(publisherId);
    }
}
