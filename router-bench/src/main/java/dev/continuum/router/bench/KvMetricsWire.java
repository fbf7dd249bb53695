package dev.continuum.router.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * kv_metrics messages as a Dynamo publisher puts them on the wire (upstream's event plane, docs/decisions.md): one ZMTP
 * multipart message of four frames (topic, publisher_id u64 BE, sequence u64 BE, version 1 + payload_len
 * u32 BE + msgpack EventEnvelope), the envelope a named map in upstream's key order whose {@code payload} is
 * the msgpack named map of an {@code ActiveLoad}. Plus the peer side of the ZMTP 3.0 handshake.
 */
final class KvMetricsWire {
    static final String TOPIC = "kv_metrics";
    private static final long PUBLISHED_AT = 1_796_083_200_000L;

    /** The message's ZMTP bytes; the two sequence fields sit at fixed offsets so they can be patched in place. */
    final byte[] bytes;
    private final int frameSequenceAt;
    private final int envelopeSequenceAt;

    private KvMetricsWire(byte[] bytes, int frameSequenceAt, int envelopeSequenceAt) {
        this.bytes = bytes;
        this.frameSequenceAt = frameSequenceAt;
        this.envelopeSequenceAt = envelopeSequenceAt;
    }

    /** Writes {@code sequence} into frame 2 and into the envelope (both big-endian u64). */
    void sequence(long sequence) {
        putLong(bytes, frameSequenceAt, sequence);
        putLong(bytes, envelopeSequenceAt, sequence);
    }

    /**
     * One message carrying the ActiveLoad of {@code (workerId, dpRank)}: the scheduler's view of a KV router,
     * with {@code active_decode_blocks} and {@code active_prefill_tokens}, and the worker's {@code kv_used_blocks}.
     */
    static KvMetricsWire message(long publisherId, long sequence, long workerId, long dpRank, long decodeBlocks,
            long prefillTokens) {
        byte[] activeLoad;
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("worker_id").packLong(workerId);
            p.packString("dp_rank").packLong(dpRank);
            p.packString("active_decode_blocks").packLong(decodeBlocks);
            p.packString("active_prefill_tokens").packLong(prefillTokens);
            p.packString("kv_used_blocks").packLong(decodeBlocks + 17);
            activeLoad = p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] envelope;
        int sequenceInEnvelope;
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("publisher_id").packLong(publisherId);
            p.packString("sequence");
            p.flush();
            sequenceInEnvelope = (int) p.getTotalWrittenBytes() + 1; // after the uint64 marker
            p.writePayload(new byte[] {(byte) 0xcf, 0, 0, 0, 0, 0, 0, 0, 0});
            p.packString("published_at").packLong(PUBLISHED_AT);
            p.packString("topic").packString(TOPIC);
            p.packString("payload").packBinaryHeader(activeLoad.length);
            p.writePayload(activeLoad);
            envelope = p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] topic = TOPIC.getBytes(StandardCharsets.US_ASCII);
        byte[] frame3 = ByteBuffer.allocate(5 + envelope.length).put((byte) 1).putInt(envelope.length).put(envelope)
                .array();
        byte[][] parts = {topic, new byte[8], new byte[8], frame3};
        putLong(parts[1], 0, publisherId);
        ByteBuffer b = ByteBuffer.allocate(parts.length * 9 + topic.length + 16 + frame3.length);
        int frameSequenceAt = 0;
        int envelopeSequenceAt = 0;
        for (int i = 0; i < parts.length; i++) {
            int more = i < parts.length - 1 ? 0x01 : 0x00;
            if (parts[i].length <= 255) {
                b.put((byte) more).put((byte) parts[i].length);
            } else {
                b.put((byte) (more | 0x02)).putLong(parts[i].length);
            }
            if (i == 2) {
                frameSequenceAt = b.position();
            } else if (i == 3) {
                envelopeSequenceAt = b.position() + 5 + sequenceInEnvelope;
            }
            b.put(parts[i]);
        }
        KvMetricsWire wire = new KvMetricsWire(java.util.Arrays.copyOf(b.array(), b.position()), frameSequenceAt,
                envelopeSequenceAt);
        wire.sequence(sequence);
        return wire;
    }

    /** A ZMTP 3.0 PUB's greeting (NULL mechanism) followed by its READY command ({@code Socket-Type: PUB}). */
    static byte[] pubHandshake() {
        ByteBuffer b = ByteBuffer.allocate(64 + 2 + 25);
        b.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F).put((byte) 3).put((byte) 0);
        b.put("NULL".getBytes(StandardCharsets.US_ASCII)).put(new byte[16]);
        b.put((byte) 1).put(new byte[31]); // as-server, filler
        byte[] name = "READY".getBytes(StandardCharsets.US_ASCII);
        byte[] prop = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = "PUB".getBytes(StandardCharsets.US_ASCII);
        int body = 1 + name.length + 1 + prop.length + 4 + value.length;
        b.put((byte) 0x04).put((byte) body).put((byte) name.length).put(name).put((byte) prop.length).put(prop)
                .putInt(value.length).put(value);
        return b.array();
    }

    private static void putLong(byte[] a, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            a[at + i] = (byte) v;
            v >>>= 8;
        }
    }
}
