package dev.continuum.router.eventplane.wire;

import java.util.Objects;

/**
 * Dynamo's {@code EventEnvelope} with the frame-level identity it arrived with (frames 1 and 2 repeat the
 * envelope's publisher ID and sequence; the decoder checks they agree).
 *
 * @param publisherId     the publisher incarnation's ID, an unsigned 64-bit value held in a long
 * @param sequence        per-publisher, starting at 0, unsigned
 * @param publishedAtMillis Unix milliseconds (publisher's clock; informational only)
 * @param topic           the bare topic
 * @param payload         the msgpack bytes of the typed event (a copy, at most the family's payload limit)
 */
public record EventEnvelope(long publisherId, long sequence, long publishedAtMillis, String topic, byte[] payload) {
    public EventEnvelope {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(payload, "payload");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EventEnvelope e && publisherId == e.publisherId && sequence == e.sequence
                && publishedAtMillis == e.publishedAtMillis && topic.equals(e.topic)
                && java.util.Arrays.equals(payload, e.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(publisherId, sequence, publishedAtMillis, topic) * 31 + java.util.Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "EventEnvelope[publisher=" + Long.toUnsignedString(publisherId) + ", sequence="
                + Long.toUnsignedString(sequence) + ", topic=" + topic + ", payload=" + payload.length + " bytes]";
    }
}
