package dev.continuum.router.eventplane.nats;

import java.util.Locale;

/** Why a NATS message was dropped before its family saw it: a closed label of the dropped-messages counter. */
public enum NatsDrop {
    /** Larger than the family's payload limit plus the envelope; refused before it is copied. */
    OVERSIZED,
    /** Not a msgpack envelope whose publisher_id and sequence can be read. */
    MALFORMED,
    /** The subscription's queue towards its event loop is full. */
    BACKLOG,
    /** The NATS client's own pending limit was exceeded (a slow consumer); the client dropped it. */
    SLOW_CONSUMER;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }
}
