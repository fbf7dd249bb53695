package dev.continuum.router.eventbus;

import dev.continuum.router.testing.DynamoEventWire;
import java.nio.charset.StandardCharsets;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A real ZMTP PUB socket (JeroMQ) on loopback sending upstream-format kv_metrics messages, packed with
 * msgpack-core (an encoder independent of the router's decoder). Use from one thread.
 */
public final class KvMetricsPublisher implements AutoCloseable {
    public static final String TOPIC = "kv_metrics";

    private final ZContext context;
    private final ZMQ.Socket socket;
    public final long publisherId;
    public final int port;

    public KvMetricsPublisher(ZContext context, long publisherId) {
        this.context = context;
        this.publisherId = publisherId;
        socket = context.createSocket(SocketType.PUB);
        socket.setLinger(0);
        socket.setSndHWM(100_000);
        socket.bind("tcp://127.0.0.1:*");
        String endpoint = socket.getLastEndpoint();
        port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    public String address() {
        return "tcp://127.0.0.1:" + port;
    }

    /** One message: topic, publisher ID, sequence, and the framed envelope around an ActiveLoad. */
    public void publish(long claimedPublisherId, long sequence, long workerId, long dpRank, long kvUsed) {
        byte[] load = DynamoEventWire.activeLoad(workerId, dpRank, null, kvUsed);
        byte[] frame = DynamoEventWire.frame(DynamoEventWire.envelope(claimedPublisherId, sequence, TOPIC, load));
        socket.send(TOPIC.getBytes(StandardCharsets.US_ASCII), ZMQ.SNDMORE);
        socket.send(DynamoEventWire.u64(claimedPublisherId), ZMQ.SNDMORE);
        socket.send(DynamoEventWire.u64(sequence), ZMQ.SNDMORE);
        socket.send(frame, 0);
    }

    @Override
    public void close() {
        context.destroySocket(socket);
    }
}
