package dev.continuum.router.eventplane.wire;

import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.msgpack.value.ValueType;

/**
 * Decodes one event-plane message of a topic (ai-dynamo/dynamo
 * lib/runtime/src/transports/event_plane/zmq_transport.rs), exactly:
 *
 * <pre>
 * [ topic ][ publisher_id u64 BE ][ sequence u64 BE ][ version u8 = 1 | payload_len u32 BE | payload ]
 * payload = msgpack EventEnvelope {publisher_id, sequence, published_at, topic, payload: bin}
 * </pre>
 *
 * The envelope is read as a named map (keys in any order, unknown keys skipped) or as a positional array,
 * since readers of the N-2 window accept both. A declared payload above the limit is dropped as
 * {@link EventDrop#OVERSIZED} before any msgpack is parsed. Thread-safe (the msgpack cursor is one per
 * thread); per message it allocates the returned envelope, its payload copy and the cursor's array view:
 * keys and the topic are compared in place, and the topic of a good envelope is the decoder's own string.
 */
public final class EventFrameDecoder {
    /** The only frame version upstream writes. */
    public static final int FRAME_VERSION = 1;
    /** version u8 + payload_len u32. */
    public static final int FRAME_HEADER_BYTES = 5;
    public static final int ID_FRAME_BYTES = 8;
    /** kv_metrics payloads above this are refused before parsing (16 KiB, docs/decisions.md). */
    public static final int MAX_KV_METRICS_PAYLOAD_BYTES = 16 * 1024;

    private static final byte[] KEY_PUBLISHER_ID = ascii("publisher_id");
    private static final byte[] KEY_SEQUENCE = ascii("sequence");
    private static final byte[] KEY_PUBLISHED_AT = ascii("published_at");
    private static final byte[] KEY_TOPIC = ascii("topic");
    private static final byte[] KEY_PAYLOAD = ascii("payload");

    /** Stands for an envelope topic other than ours (compared by identity, never by text). */
    private static final String OTHER_TOPIC = new String("(another topic)");
    private static final ThreadLocal<MsgpackCursor> CURSOR = ThreadLocal.withInitial(MsgpackCursor::new);
    private static final byte[][] ENVELOPE_KEYS = {KEY_PUBLISHER_ID, KEY_SEQUENCE, KEY_PUBLISHED_AT, KEY_TOPIC,
        KEY_PAYLOAD};

    private final byte[] topic;
    private final String topicName;
    private final int maxPayloadBytes;

    /**
     * @param topic           the exact topic frame 0 and the envelope must carry
     * @param maxPayloadBytes the largest declared payload (frame 3 after its 5-byte header) that is parsed
     */
    public EventFrameDecoder(String topic, int maxPayloadBytes) {
        this.topicName = topic;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        if (maxPayloadBytes < 0) {
            throw new IllegalArgumentException("maxPayloadBytes: " + maxPayloadBytes + " (expected: >= 0)");
        }
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /** The kv_metrics decoder: topic {@code kv_metrics}, payloads up to 16 KiB. */
    public static EventFrameDecoder kvMetrics() {
        return new EventFrameDecoder("kv_metrics", MAX_KV_METRICS_PAYLOAD_BYTES);
    }

    public Decoded<EventEnvelope> decode(ZmtpMessage message) {
        try {
            return new Decoded.Ok<>(decodeOrThrow(message));
        } catch (WireException e) {
            return new Decoded.Dropped<>(e.drop(), e.getMessage());
        }
    }

    private EventEnvelope decodeOrThrow(ZmtpMessage m) throws WireException {
        if (m.parts() != 4) {
            throw WireException.malformed("parts " + m.parts() + " (expected: 4)");
        }
        byte[] a = m.array();
        if (!Arrays.equals(a, m.offset(0), m.offset(0) + m.length(0), topic, 0, topic.length)) {
            throw new WireException(EventDrop.TOPIC_MISMATCH, "frame 0 topic");
        }
        if (m.length(1) != ID_FRAME_BYTES || m.length(2) != ID_FRAME_BYTES) {
            throw WireException.malformed("id frame length (expected: 8)");
        }
        long framePublisher = readLong(a, m.offset(1));
        long frameSequence = readLong(a, m.offset(2));
        int at = m.offset(3);
        int frameLength = m.length(3);
        if (frameLength < FRAME_HEADER_BYTES) {
            throw WireException.malformed("frame header length");
        }
        int version = a[at] & 0xFF;
        if (version != FRAME_VERSION) {
            throw new WireException(EventDrop.UNKNOWN_VERSION, "frame version " + version);
        }
        long payloadLength = ((a[at + 1] & 0xFFL) << 24) | ((a[at + 2] & 0xFF) << 16) | ((a[at + 3] & 0xFF) << 8)
                | (a[at + 4] & 0xFF);
        if (payloadLength > maxPayloadBytes) {
            throw new WireException(EventDrop.OVERSIZED, "payload " + payloadLength + " bytes (expected: <= "
                    + maxPayloadBytes + ")");
        }
        if (payloadLength != frameLength - FRAME_HEADER_BYTES) {
            throw WireException.malformed("payload_len disagrees with the frame");
        }
        EventEnvelope envelope = envelope(CURSOR.get().reset(a, at + FRAME_HEADER_BYTES, (int) payloadLength));
        if (envelope.topic() != topicName) { // topic() returns topicName itself on a match
            throw new WireException(EventDrop.TOPIC_MISMATCH, "envelope topic");
        }
        if (envelope.publisherId() != framePublisher) {
            throw new WireException(EventDrop.IDENTITY_MISMATCH, "frame and envelope publisher_id differ");
        }
        if (envelope.sequence() != frameSequence) {
            throw WireException.malformed("frame and envelope sequence differ");
        }
        return envelope;
    }

    private EventEnvelope envelope(MsgpackCursor c) throws WireException {
        long publisherId = 0;
        long sequence = 0;
        long publishedAt = 0;
        String envelopeTopic = null; // this.topicName when it matches, else the string sent
        byte[] payload = null;
        int seen = 0;
        ValueType type = c.nextType();
        if (type == ValueType.MAP) {
            int n = c.mapHeader();
            for (int i = 0; i < n; i++) {
                if (c.nextType() != ValueType.STRING) {
                    throw WireException.malformed("envelope key");
                }
                switch (c.stringIndex(ENVELOPE_KEYS)) {
                    case 0 -> {
                        publisherId = c.unsigned64();
                        seen |= 1;
                    }
                    case 1 -> {
                        sequence = c.unsigned64();
                        seen |= 2;
                    }
                    case 2 -> {
                        publishedAt = c.unsigned64();
                        seen |= 4;
                    }
                    case 3 -> {
                        envelopeTopic = topic(c);
                        seen |= 8;
                    }
                    case 4 -> {
                        payload = c.binary(maxPayloadBytes, EventDrop.OVERSIZED);
                        seen |= 16;
                    }
                    default -> c.skip();
                }
            }
        } else if (type == ValueType.ARRAY) {
            int n = c.arrayHeader();
            if (n < 5) {
                throw WireException.malformed("envelope array length " + n + " (expected: 5)");
            }
            publisherId = c.unsigned64();
            sequence = c.unsigned64();
            publishedAt = c.unsigned64();
            envelopeTopic = topic(c);
            payload = c.binary(maxPayloadBytes, EventDrop.OVERSIZED);
            seen = 31;
            for (int i = 5; i < n; i++) {
                c.skip();
            }
        } else {
            throw WireException.malformed("envelope is not a map or an array");
        }
        if (seen != 31 || envelopeTopic == null || payload == null) {
            throw WireException.malformed("envelope field missing");
        }
        if (c.remaining() != 0) {
            throw WireException.malformed("bytes after the envelope");
        }
        return new EventEnvelope(publisherId, sequence, publishedAt, envelopeTopic, payload);
    }

    /**
     * The envelope's topic, compared in place: {@link #topicName} itself when it matches, else
     * {@link #OTHER_TOPIC} (the envelope is then dropped as a topic mismatch; its text is never shown).
     */
    private String topic(MsgpackCursor c) throws WireException {
        if (c.nextType() != ValueType.STRING) {
            throw WireException.malformed("msgpack string");
        }
        return c.stringIndex(topic) == 0 ? topicName : OTHER_TOPIC;
    }

    private static long readLong(byte[] a, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (a[at + i] & 0xFF);
        }
        return v;
    }

    public static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
