package dev.continuum.router.eventplane;

import java.util.Locale;
import java.util.Optional;

/**
 * How subscriptions reach publishers: {@code dynamo.load.transport} chooses between {@link #DIRECT} and
 * {@link #BROKER} for ZMQ channels; {@link #NATS} is chosen by the channel's own discovery record, never by
 * configuration. Also a label of the subscription gauges.
 */
public enum Transport {
    /** Dial the publisher's {@code tcp://} endpoint from the router. */
    DIRECT,
    /** Through an in-cluster event broker's stream (the event bus); subscriptions wait in pending without one. */
    BROKER,
    /** A channel whose record names the {@code Nats} transport, over the shared NATS connection (docs/nats.md). */
    NATS;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The spelling in configuration, metrics and the admin API. */
    public String label() {
        return label;
    }

    /** The ZMQ transport configured by {@code label} ({@code direct} or {@code broker}); NATS is not configurable. */
    public static Optional<Transport> configurable(String text) {
        return fromLabel(text).filter(t -> t != NATS);
    }

    public static Optional<Transport> fromLabel(String text) {
        for (Transport t : values()) {
            if (t.label.equals(text)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
