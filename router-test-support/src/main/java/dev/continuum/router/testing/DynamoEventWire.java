package dev.continuum.router.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Test encoders of what Dynamo's event publishers put on the wire, packed with msgpack-core as upstream's
 * rmp_serde named layout does (ai-dynamo/dynamo lib/runtime event plane; the router's decoders are checked
 * against python3-msgpack separately): the event envelope, its ZMTP frame, and the kv_metrics
 * {@code ActiveLoad} payload. Shared by the load, event-bus and end-to-end tests.
 */
public final class DynamoEventWire {
    /** The envelope's {@code published_at}, fixed: no decoder reads it. */
    private static final long PUBLISHED_AT_MILLIS = 1_790_000_000_000L;

    private DynamoEventWire() {
    }

    /** The event envelope {@code {publisher_id, sequence, published_at, topic, payload}}. */
    public static byte[] envelope(long publisherId, long sequence, String topic, byte[] payload) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("publisher_id").packBigInteger(unsigned(publisherId));
            p.packString("sequence").packBigInteger(unsigned(sequence));
            p.packString("published_at").packLong(PUBLISHED_AT_MILLIS);
            p.packString("topic").packString(topic);
            p.packString("payload").packBinaryHeader(payload.length);
            p.writePayload(payload);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The message's last ZMTP part: version byte 1, the envelope's length (big-endian u32), the envelope. */
    public static byte[] frame(byte[] envelope) {
        return ByteBuffer.allocate(5 + envelope.length).put((byte) 1).putInt(envelope.length).put(envelope).array();
    }

    /** A u64 part (publisher ID, sequence), big-endian. */
    public static byte[] u64(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    /**
     * An {@code ActiveLoad}; a null field is packed as nil, as dynamo.vllm 1.4.2 sends {@code active_decode_blocks}
     * and {@code active_prefill_tokens}.
     */
    public static byte[] activeLoad(long workerId, long dpRank, @Nullable Long decodeBlocks, @Nullable Long kvUsed) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("worker_id").packLong(workerId);
            p.packString("dp_rank").packLong(dpRank);
            p.packString("active_decode_blocks");
            packOptional(p, decodeBlocks);
            p.packString("active_prefill_tokens").packNil();
            p.packString("kv_used_blocks");
            packOptional(p, kvUsed);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void packOptional(MessageBufferPacker p, @Nullable Long v) throws IOException {
        if (v == null) {
            p.packNil();
        } else {
            p.packLong(v);
        }
    }

    private static BigInteger unsigned(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }
}
