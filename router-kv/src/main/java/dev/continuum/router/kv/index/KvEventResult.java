package dev.continuum.router.kv.index;

import dev.continuum.router.eventplane.wire.EventDrop;
import java.util.Locale;

/** The closed {@code result} label of {@code continuum_dynamo_kv_events_total} (docs/kv-routing.md). */
public enum KvEventResult {
    /** Applied to the index (stored, removed or cleared). */
    INDEXED,
    /** {@code event_id} below the rank's cursor: already seen, skipped. */
    REPLAY,
    /** {@code event_id} jumped past cursor + 1: the rank was cleared to rebuild from the next chains. */
    GAP,
    /** Not a live worker, a rank its card does not declare, or a rank fed by another subscription. */
    IDENTITY_MISMATCH,
    /** Refused at a ceiling: nodes, blocks per rank, ownerships, owners per node, ranks per subscription. */
    OVER_CAPACITY,
    /** Another storage tier or residency domain than the worker's device cache: counted, not indexed. */
    OTHER_TIER,
    /** A {@code stored} chain whose {@code parent_hash} the rank does not hold: dropped. */
    UNKNOWN_PARENT,
    /** A record or frame that breaks the wire format or its bounds. */
    MALFORMED,
    /** A payload declared above 1 MiB, refused before parsing. */
    OVERSIZED,
    /** The writer's queue was full: the message was dropped (the rank's next event shows the gap). */
    QUEUE_FULL;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }

    /** The result counted for a message the frame decoder dropped. */
    static KvEventResult of(EventDrop drop) {
        return switch (drop) {
            case OVERSIZED -> OVERSIZED;
            case IDENTITY_MISMATCH -> IDENTITY_MISMATCH;
            case MALFORMED, UNKNOWN_VERSION, TOPIC_MISMATCH -> MALFORMED;
        };
    }
}
