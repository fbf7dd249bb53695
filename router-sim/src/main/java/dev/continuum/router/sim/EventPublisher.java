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
 * One publisher of upstream's event plane in direct ZMQ mode: a PUB socket bound on a loopback port, sending one
 * four-part message per event: the bare topic, the publisher ID and the sequence as u64 big-endian, then version 1,
 * a u32 big-endian length and the msgpack {@code EventEnvelope} whose {@code payload} (bin) is the msgpack event.
 * Each topic has its own publisher, socket and sequence, as each upstream event publisher does.
 *
 * <p>Not thread-safe, as a ZMQ socket is not: one thread publishes and then closes it.
 */
final class EventPublisher implements AutoCloseable {
    private final ZMQ.Socket socket;
    private final String topic;
    private final long publisherId;
    private final int port;
    private volatile long sequence;

    EventPublisher(ZContext context, String topic, long publisherId) {
        this.topic = topic;
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

    /** How many events this publisher has sent so far (the next sequence number). */
    long published() {
        return sequence;
    }

    /** Publishes one event; a subscriber that is not connected yet simply misses it, as with upstream. */
    void publish(byte[] payload) {
        long next = sequence;
        byte[][] parts = message(topic, publisherId, next, System.currentTimeMillis(), payload);
        sequence = next + 1;
        for (int i = 0; i < parts.length; i++) {
            socket.send(parts[i], i < parts.length - 1 ? ZMQ.SNDMORE | ZMQ.DONTWAIT : ZMQ.DONTWAIT);
        }
    }

    @Override
    public void close() {
        socket.close();
    }

    /** The four parts of one message on {@code topic} carrying {@code payload} (an encoded event). */
    static byte[][] message(String topic, long publisherId, long sequence, long publishedAtMs, byte[] payload) {
        byte[] envelope = pack(p -> {
            p.packMapHeader(5);
            p.packString("publisher_id");
            packU64(p, publisherId);
            p.packString("sequence");
            packU64(p, sequence);
            p.packString("published_at");
            packU64(p, publishedAtMs);
            p.packString("topic");
            p.packString(topic);
            p.packString("payload");
            p.packBinaryHeader(payload.length);
            p.writePayload(payload);
        });
        ByteBuffer frame = ByteBuffer.allocate(5 + envelope.length);
        frame.put((byte) 1).putInt(envelope.length).put(envelope);
        return new byte[][] {
            topic.getBytes(StandardCharsets.UTF_8),
            ByteBuffer.allocate(8).putLong(publisherId).array(),
            ByteBuffer.allocate(8).putLong(sequence).array(),
            frame.array()
        };
    }

    /** IDs and hashes are u64: a Java long with the top bit set is written as the unsigned value, never negative. */
    static void packU64(MessagePacker p, long value) throws IOException {
        if (value >= 0) {
            p.packLong(value);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(value)));
        }
    }

    /** Writes one msgpack value. */
    interface Body {
        void write(MessagePacker p) throws IOException;
    }

    static byte[] pack(Body body) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            p.flush();
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
