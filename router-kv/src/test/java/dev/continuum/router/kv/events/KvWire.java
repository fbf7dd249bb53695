package dev.continuum.router.kv.events;

import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Test encoder of kv-events in upstream's named layout (ai-dynamo/dynamo lib/kv-router/src/protocols.rs,
 * serialized with rmp_serde::to_vec_named), built on msgpack-core; the layout itself is cross-checked against
 * python3-msgpack in {@code KvEventDecoderCrossCheckTest}.
 */
public final class KvWire {
    private KvWire() {
    }

    public static byte[] stored(long worker, long eventId, long dpRank, @Nullable Long parent, long[] blockHashes,
                                long[] tokensHashes) {
        return event(worker, "device", eventId, dpRank, p -> {
            p.packMapHeader(1).packString("stored").packMapHeader(3);
            p.packString("parent_hash");
            if (parent == null) {
                p.packNil();
            } else {
                u64(p, parent);
            }
            p.packString("start_position").packNil();
            p.packString("blocks").packArrayHeader(blockHashes.length);
            for (int i = 0; i < blockHashes.length; i++) {
                p.packMapHeader(3).packString("block_hash");
                u64(p, blockHashes[i]);
                p.packString("tokens_hash");
                u64(p, tokensHashes[i]);
                p.packString("mm_extra_info").packNil();
            }
        });
    }

    public static byte[] removed(long worker, long eventId, long dpRank, long... blockHashes) {
        return event(worker, "device", eventId, dpRank, p -> {
            p.packMapHeader(1).packString("removed").packMapHeader(1).packString("block_hashes")
                    .packArrayHeader(blockHashes.length);
            for (long h : blockHashes) {
                u64(p, h);
            }
        });
    }

    public static byte[] cleared(long worker, long eventId, long dpRank) {
        return event(worker, "device", eventId, dpRank, p -> p.packString("cleared"));
    }

    public static byte[] clearedOnTier(long worker, String tier, long eventId, long dpRank) {
        return event(worker, tier, eventId, dpRank, p -> p.packString("cleared"));
    }

    /** A batch: a msgpack array of whole RouterEvent payloads. */
    public static byte[] batch(byte[]... events) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(events.length);
            out.write(p.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (byte[] e : events) {
            out.writeBytes(e);
        }
        return out.toByteArray();
    }

    interface Data {
        void write(MessagePacker p) throws IOException;
    }

    static byte[] event(long worker, String tier, long eventId, long dpRank, Data data) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3).packString("worker_id");
            u64(p, worker);
            p.packString("storage_tier").packString(tier);
            p.packString("event").packMapHeader(3).packString("event_id");
            u64(p, eventId);
            p.packString("data");
            data.write(p);
            p.packString("dp_rank").packLong(dpRank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void u64(MessagePacker p, long bits) throws IOException {
        p.packBigInteger(new BigInteger(Long.toUnsignedString(bits)));
    }

    /** The four-frame event-plane message upstream's ZMQ transport sends around {@code payload}. */
    public static ZmtpMessage message(long publisherId, long sequence, byte[] payload) {
        return parts(frames(publisherId, sequence, payload));
    }

    /**
     * The four frames as upstream's ZMQ transport (lib/runtime/src/transports/event_plane/zmq_transport.rs) sends
     * them: topic, publisher_id u64 BE, sequence u64 BE, then version 1, payload_len u32 BE and the msgpack
     * EventEnvelope whose {@code payload} is the RouterEvent.
     */
    public static byte[][] frames(long publisherId, long sequence, byte[] payload) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5).packString("publisher_id");
            u64(p, publisherId);
            p.packString("sequence");
            u64(p, sequence);
            p.packString("published_at").packLong(1_700_000_000_000L);
            p.packString("topic").packString("kv-events");
            p.packString("payload").packBinaryHeader(payload.length).writePayload(payload);
            byte[] envelope = p.toByteArray();
            byte[] frame = new byte[5 + envelope.length];
            frame[0] = 1;
            frame[1] = (byte) (envelope.length >>> 24);
            frame[2] = (byte) (envelope.length >>> 16);
            frame[3] = (byte) (envelope.length >>> 8);
            frame[4] = (byte) envelope.length;
            System.arraycopy(envelope, 0, frame, 5, envelope.length);
            return new byte[][] {"kv-events".getBytes(StandardCharsets.US_ASCII), be(publisherId), be(sequence), frame};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] be(long v) {
        byte[] b = new byte[8];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) v;
            v >>>= 8;
        }
        return b;
    }

    /** A ZmtpMessage over the given parts, laid out in one array as the subscriber's assembly buffer is. */
    public static ZmtpMessage parts(byte[]... parts) {
        int total = 0;
        for (byte[] part : parts) {
            total += part.length;
        }
        byte[] all = new byte[total + 3]; // an offset, as in a reused buffer
        int[] offsets = new int[parts.length];
        int at = 3;
        for (int i = 0; i < parts.length; i++) {
            offsets[i] = at;
            System.arraycopy(parts[i], 0, all, at, parts[i].length);
            at += parts[i].length;
        }
        return new ZmtpMessage() {
            @Override
            public int parts() {
                return parts.length;
            }

            @Override
            public byte[] array() {
                return all;
            }

            @Override
            public int offset(int part) {
                return offsets[part];
            }

            @Override
            public int length(int part) {
                return parts[part].length;
            }
        };
    }
}
