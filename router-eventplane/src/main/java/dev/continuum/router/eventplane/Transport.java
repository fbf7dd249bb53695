package dev.continuum.router.eventplane;

import java.util.Locale;
import java.util.Optional;

/** How subscriptions reach publishers ({@code dynamo.load.transport}); also a label of the subscription gauges. */
public enum Transport {
    /** Dial the publisher's {@code tcp://} endpoint from the router. */
    DIRECT,
    /** Through an in-cluster event broker's stream (the event bus); subscriptions wait in pending without one. */
    BROKER;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The spelling in configuration, metrics and the admin API. */
    public String label() {
        return label;
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
