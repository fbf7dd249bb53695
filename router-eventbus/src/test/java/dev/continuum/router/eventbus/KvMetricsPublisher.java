package dev.continuum.router.eventbus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A real ZMTP PUB socket (JeroMQ) on loopback sending upstream-format kv_metrics messages, packed with
 * msgpack-core (an encoder independent of the router's decoder). Use from one thread.
 */
final class KvMetricsPublisher implements AutoCloseable {
    static final String TOPIC = "kv_metrics";

    private final ZContext context;
    private final ZMQ.Socket socket;
    final long publisherId;
    final int port;

    KvMetricsPublisher(ZContext context, long publisherId) {
        this.context = context;
        this.publisherId = publisherId;
        socket = context.createSocket(SocketType.PUB);
        socket.setLinger(0);
        socket.setSndHWM(100_000);
        socket.bind("tcp://127.0.0.1:*");
        String endpoint = socket.getLastEndpoint();
        port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    String address() {
        return "tcp://127.0.0.1:" + port;
    }

    /** One message: topic, publisher ID, sequence, and the framed envelope around an ActiveLoad. */
    void publish(long claimedPublisherId, long sequence, long workerId, long dpRank, long kvUsed) {
        byte[] load = activeLoad(workerId, dpRank, kvUsed);
        byte[] envelope = envelope(claimedPublisherId, sequence, load);
        byte[] frame = ByteBuffer.allocate(5 + envelope.length).put((byte) 1).putInt(envelope.length).put(envelope)
                .array();
        socket.send(TOPIC.getBytes(StandardCharsets.US_ASCII), ZMQ.SNDMORE);
        socket.send(u64(claimedPublisherId), ZMQ.SNDMORE);
        socket.send(u64(sequence), ZMQ.SNDMORE);
        socket.send(frame, 0);
    }

    private static byte[] u64(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    private static byte[] activeLoad(long workerId, long dpRank, long kvUsed) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("worker_id").packLong(workerId);
            p.packString("dp_rank").packLong(dpRank);
            p.packString("active_decode_blocks").packNil();
            p.packString("active_prefill_tokens").packNil();
            p.packString("kv_used_blocks").packLong(kvUsed);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] envelope(long publisherId, long sequence, byte[] payload) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(5);
            p.packString("publisher_id").packBigInteger(new BigInteger(Long.toUnsignedString(publisherId)));
            p.packString("sequence").packBigInteger(new BigInteger(Long.toUnsignedString(sequence)));
            p.packString("published_at").packLong(1_790_000_000_000L);
            p.packString("topic").packString(TOPIC);
            p.packString("payload").packBinaryHeader(payload.length);
            p.writePayload(payload);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        context.destroySocket(socket);
    }
}
