package dev.continuum.router.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One worker's kv_metrics publisher in direct ZMQ mode (upstream's event plane): a PUB socket bound on a loopback
 * port, sending one four-part message per sample: the bare topic, the publisher ID and the sequence as u64
 * big-endian, then version 1, a u32 big-endian length and the msgpack {@code EventEnvelope} whose payload is the
 * msgpack {@code ActiveLoad}.
 *
 * <p>Not thread-safe, as a ZMQ socket is not: one thread publishes and then closes it.
 */
final class KvMetricsPublisher implements AutoCloseable {
    static final String TOPIC = "kv_metrics";

    private final ZMQ.Socket socket;
    private final long publisherId;
    private final int port;
    private volatile long sequence;

    KvMetricsPublisher(ZContext context, long publisherId) {
        this.publisherId = publisherId;
        this.socket = context.createSocket(SocketType.PUB);
        socket.setLinger(0);
        socket.setSndHWM(100_000);
        socket.bind("tcp://127.0.0.1:*");
        String endpoint = socket.getLastEndpoint();
        this.port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    String endpoint() {
        return "tcp://127.0.0.1:" + port;
    }

    long publisherId() {
        return publisherId;
    }

    /** How many samples this publisher has sent so far (the next sequence number). */
    long published() {
        return sequence;
    }

    /** Publishes one sample; a subscriber that is not connected yet simply misses it, as with upstream. */
    void publish(long workerId, int dpRank, long activeDecodeBlocks, long kvUsedBlocks) {
        long next = sequence;
        byte[][] parts = message(publisherId, next, System.currentTimeMillis(),
                activeLoad(workerId, dpRank, activeDecodeBlocks, kvUsedBlocks));
        sequence = next + 1;
        for (int i = 0; i < parts.length; i++) {
            socket.send(parts[i], i < parts.length - 1 ? ZMQ.SNDMORE | ZMQ.DONTWAIT : ZMQ.DONTWAIT);
        }
    }

    @Override
    public void close() {
        socket.close();
    }

    /** The four parts of one message carrying {@code payload} (an encoded {@code ActiveLoad}). */
    static byte[][] message(long publisherId, long sequence, long publishedAtMs, byte[] payload) {
        byte[] envelope = pack(p -> {
            p.packMapHeader(5);
            p.packString("publisher_id");
            packU64(p, publisherId);
            p.packString("sequence");
            packU64(p, sequence);
            p.packString("published_at");
            packU64(p, publishedAtMs);
            p.packString("topic");
            p.packString(TOPIC);
            p.packString("payload");
            p.packBinaryHeader(payload.length);
            p.writePayload(payload);
        });
        ByteBuffer frame = ByteBuffer.allocate(5 + envelope.length);
        frame.put((byte) 1).putInt(envelope.length).put(envelope);
        return new byte[][] {
            TOPIC.getBytes(StandardCharsets.UTF_8),
            ByteBuffer.allocate(8).putLong(publisherId).array(),
            ByteBuffer.allocate(8).putLong(sequence).array(),
            frame.array()
        };
    }

    /**
     * A worker's {@code ActiveLoad}, named map in declaration order, in the later form that carries
     * {@code scheduler_load_scope} (nil from a worker) before {@code kv_used_blocks}; workers send no
     * {@code active_prefill_tokens} (nil).
     */
    static byte[] activeLoad(long workerId, int dpRank, long activeDecodeBlocks, long kvUsedBlocks) {
        return pack(p -> {
            p.packMapHeader(6);
            p.packString("worker_id");
            packU64(p, workerId);
            p.packString("dp_rank");
            p.packLong(dpRank);
            p.packString("active_decode_blocks");
            p.packLong(activeDecodeBlocks);
            p.packString("active_prefill_tokens");
            p.packNil();
            p.packString("scheduler_load_scope");
            p.packNil();
            p.packString("kv_used_blocks");
            p.packLong(kvUsedBlocks);
        });
    }

    /** IDs are u64: a Java long with the top bit set is written as the unsigned value, never negative. */
    private static void packU64(MessagePacker p, long value) throws IOException {
        if (value >= 0) {
            p.packLong(value);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(value)));
        }
    }

    private interface Body {
        void write(MessagePacker p) throws IOException;
    }

    private static byte[] pack(Body body) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            p.flush();
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
