package dev.continuum.router.eventplane.nats;

import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.wire.MsgpackCursor;
import org.msgpack.value.ValueType;
import dev.continuum.router.eventplane.wire.WireException;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Lays a NATS message out as the four parts the ZMQ transport carries, so every family decodes both transports
 * with the same {@link EventFrameDecoder} and applies the same identity gate, dedup and gap rules.
 *
 * <p>On NATS, upstream publishes the msgpack {@code EventEnvelope} itself as the message data on subject
 * {@code {subject_prefix}.{topic}} (ai-dynamo/dynamo {@code lib/runtime/src/transports/event_plane/mod.rs} at
 * 0e8f300946240739dd57dda47f7a2f331c0b2a36: {@code EventPublisher::publish_bytes_ref} encodes with
 * {@code MsgpackCodec}, "Msgpack codec for all transports", and hands the bytes to the NATS transport), with
 * no frame of its own: the publisher ID and sequence that ZMQ repeats in parts 1 and 2 are read here from the
 * envelope's own keys, and the decoder then checks the whole envelope as usual.
 */
final class NatsFrames {
    private static final byte[] KEY_PUBLISHER_ID = EventFrameDecoder.ascii("publisher_id");
    private static final byte[] KEY_SEQUENCE = EventFrameDecoder.ascii("sequence");
    private static final ThreadLocal<MsgpackCursor> CURSOR = ThreadLocal.withInitial(MsgpackCursor::new);

    /** Stands for a readable envelope of a publisher other than the one asked for (compared by identity). */
    static final ZmtpMessage ANOTHER_PUBLISHER = new ZmtpMessage() {
        @Override
        public int parts() {
            return 0;
        }

        @Override
        public byte[] array() {
            return new byte[0];
        }

        @Override
        public int offset(int part) {
            return 0;
        }

        @Override
        public int length(int part) {
            return 0;
        }
    };

    private NatsFrames() {
    }

    /**
     * The four-part view of {@code data} for {@code topic}; {@link #ANOTHER_PUBLISHER} when the envelope is
     * {@code publisherId}'s neighbour's on a shared subject (nothing is copied then); null when the envelope's
     * identity is unreadable.
     */
    static @Nullable ZmtpMessage of(String topic, byte[] data, long publisherId) {
        long[] identity = identity(data);
        if (identity == null) {
            return null;
        }
        if (identity[0] != publisherId) {
            return ANOTHER_PUBLISHER;
        }
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        int header = EventFrameDecoder.FRAME_HEADER_BYTES;
        byte[] a = new byte[t.length + 16 + header + data.length];
        System.arraycopy(t, 0, a, 0, t.length);
        putLong(a, t.length, identity[0]);
        putLong(a, t.length + 8, identity[1]);
        int at = t.length + 16;
        a[at] = (byte) EventFrameDecoder.FRAME_VERSION;
        a[at + 1] = (byte) (data.length >>> 24);
        a[at + 2] = (byte) (data.length >>> 16);
        a[at + 3] = (byte) (data.length >>> 8);
        a[at + 4] = (byte) data.length;
        System.arraycopy(data, 0, a, at + header, data.length);
        int[] offsets = {0, t.length, t.length + 8, at};
        int[] lengths = {t.length, 8, 8, header + data.length};
        return new ZmtpMessage() {
            @Override
            public int parts() {
                return 4;
            }

            @Override
            public byte[] array() {
                return a;
            }

            @Override
            public int offset(int part) {
                return offsets[part];
            }

            @Override
            public int length(int part) {
                return lengths[part];
            }
        };
    }

    /** {publisher_id, sequence} from a named-map or positional-array envelope, or null. */
    private static long @Nullable [] identity(byte[] data) {
        try {
            MsgpackCursor c = CURSOR.get().reset(data, 0, data.length);
            ValueType type = c.nextType();
            if (type == ValueType.ARRAY) {
                if (c.arrayHeader() < 2) {
                    return null;
                }
                return new long[] {c.unsigned64(), c.unsigned64()};
            }
            if (type != ValueType.MAP) {
                return null;
            }
            int n = c.mapHeader();
            long publisher = 0;
            long sequence = 0;
            int seen = 0;
            for (int i = 0; i < n && seen != 3; i++) {
                if (c.nextType() != ValueType.STRING) {
                    return null;
                }
                switch (c.stringIndex(KEY_PUBLISHER_ID, KEY_SEQUENCE)) {
                    case 0 -> {
                        publisher = c.unsigned64();
                        seen |= 1;
                    }
                    case 1 -> {
                        sequence = c.unsigned64();
                        seen |= 2;
                    }
                    default -> c.skip();
                }
            }
            return seen == 3 ? new long[] {publisher, sequence} : null;
        } catch (WireException e) {
            return null;
        }
    }

    private static void putLong(byte[] a, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            a[at + i] = (byte) v;
            v >>>= 8;
        }
    }
}
