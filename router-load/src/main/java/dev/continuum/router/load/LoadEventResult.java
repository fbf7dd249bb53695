package dev.continuum.router.load;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventDrop;
import java.util.Locale;

/** The closed label set of {@code continuum_dynamo_load_events_total{result}}: one count per received message or refusal. */
public enum LoadEventResult {
    /** Decoded and stored as the latest sample of its (worker, dp_rank). */
    APPLIED,
    MALFORMED,
    UNKNOWN_VERSION,
    TOPIC_MISMATCH,
    OVERSIZED,
    IDENTITY_MISMATCH,
    /** The load store is at its 65536-entry limit and the sample's key is new. */
    OVER_CAPACITY,
    /** A sequence at or below the highest applied on the stream, or on the key from the same publisher. */
    DUPLICATE,
    /** The peer broke the ZMTP protocol or a compiled-in bound, or its resolved address was not allowed. */
    TRANSPORT_REFUSED;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }

    static LoadEventResult of(EventDrop drop) {
        return switch (drop) {
            case MALFORMED -> MALFORMED;
            case UNKNOWN_VERSION -> UNKNOWN_VERSION;
            case TOPIC_MISMATCH -> TOPIC_MISMATCH;
            case OVERSIZED -> OVERSIZED;
            case IDENTITY_MISMATCH -> IDENTITY_MISMATCH;
        };
    }
}
