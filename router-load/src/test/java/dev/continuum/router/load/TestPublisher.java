package dev.continuum.router.load;

import java.nio.charset.StandardCharsets;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A real ZMTP 3.0 PUB peer (JeroMQ) bound on a loopback port, sending upstream-format kv_metrics messages.
 * JeroMQ sockets are not thread-safe: use one from the test thread only.
 */
final class TestPublisher implements AutoCloseable {
    private final ZContext context;
    private final ZMQ.Socket socket;
    private final int port;
    final long publisherId;
    private long nextSequence;

    private TestPublisher(ZContext context, long publisherId, int port) {
        this.context = context;
        this.publisherId = publisherId;
        this.socket = context.createSocket(SocketType.PUB);
        socket.setLinger(0);
        socket.setSndHWM(100_000);
        if (port == 0) {
            socket.bind("tcp://127.0.0.1:*");
            String endpoint = socket.getLastEndpoint();
            this.port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
        } else {
            // JeroMQ closes a previous listener on its I/O thread, a moment after close returns.
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .pollInterval(java.time.Duration.ofMillis(20)).pollInSameThread()
                    .ignoreExceptions().until(() -> socket.bind("tcp://127.0.0.1:" + port));
            this.port = port;
        }
    }

    static TestPublisher bind(ZContext context, long publisherId) {
        return new TestPublisher(context, publisherId, 0);
    }

    /** A publisher on a port a previous one used (a restarted worker process). */
    static TestPublisher bind(ZContext context, long publisherId, int port) {
        return new TestPublisher(context, publisherId, port);
    }

    String address() {
        return "tcp://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    long nextSequence() {
        return nextSequence;
    }

    void sequence(long next) {
        nextSequence = next;
    }

    /** Publishes an ActiveLoad for {@code worker} with the next sequence; returns that sequence. */
    long publish(long worker, long dpRank, Long decodeBlocks, Long kvUsed) {
        long seq = nextSequence++;
        send(Fixtures.message(publisherId, seq, Fixtures.activeLoad(worker, dpRank, decodeBlocks, kvUsed)));
        return seq;
    }

    void send(byte[]... parts) {
        for (int i = 0; i < parts.length; i++) {
            socket.send(parts[i], i < parts.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    void sendText(String... parts) {
        byte[][] bytes = new byte[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            bytes[i] = parts[i].getBytes(StandardCharsets.UTF_8);
        }
        send(bytes);
    }

    @Override
    public void close() {
        context.destroySocket(socket);
    }
}
