package dev.continuum.router.eventplane.wire;

/** Why a received event-plane message was dropped without closing its subscription (docs/load-signals.md). */
public enum EventDrop {
    /** Not four frames, an ID frame not 8 bytes, a payload length that disagrees with its frame, or bad msgpack. */
    MALFORMED,
    /** The frame header's version byte is not 1. */
    UNKNOWN_VERSION,
    /** Frame 0 or the envelope's topic is not the subscribed topic (SUB filters are byte prefixes). */
    TOPIC_MISMATCH,
    /** The declared payload is larger than the family's limit; refused before parsing. */
    OVERSIZED,
    /** Frame and envelope publisher IDs disagree, or the publisher is not the one discovery announced. */
    IDENTITY_MISMATCH
}
