package dev.continuum.router.sim;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A simulated engine's own KV-event publisher, as vLLM's {@code ZmqEventPublisher} (vllm-project/vllm
 * {@code vllm/distributed/kv_events.py}) runs it: a PUB socket sending {@code [topic, seq u64 BE, batch]} with
 * {@code seq} counting from 0, and a ROUTER replay socket that answers {@code [id, "", start u64 BE]} with every
 * kept batch from {@code start} on ({@code [id, "", seq, batch]}, with the topic before {@code seq} in the
 * {@link VllmKvGeneration#MAP} generation), then the end marker {@code seq = -1} with an empty batch. It
 * keeps the last {@code bufferSteps} batches, as vLLM's {@code buffer_steps}.
 *
 * <p>One thread owns both sockets: it sends what {@link #publish} queued and serves replay requests between.
 * {@link #dropNext} makes the next batches go unsent (kept for replay only), so tests see gaps a replay fills.
 */
final class VllmKvPublisher implements AutoCloseable {
    static final int DEFAULT_BUFFER_STEPS = 10_000;
    private static final byte[] END = {-1, -1, -1, -1, -1, -1, -1, -1};

    private final VllmKvGeneration generation;
    private final byte[] topic;
    private final int bufferSteps;
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    private final String endpoint;
    private final String replayEndpoint;
    private final ConcurrentLinkedQueue<Queued> queue = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<byte[][]> kept = new ArrayDeque<>(); // {seq, batch}; owner thread only
    private final AtomicLong published = new AtomicLong();
    private final AtomicInteger dropNext = new AtomicInteger();
    private final ZMQ.Poller poller;
    private final Thread thread;
    private volatile boolean running = true;
    private long seq;

    VllmKvPublisher(ZContext context, VllmKvGeneration generation, String topic, int bufferSteps) {
        this.generation = generation;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.bufferSteps = bufferSteps;
        this.pub = context.createSocket(SocketType.PUB);
        pub.setSndHWM(100_000);
        pub.bind("tcp://127.0.0.1:*");
        this.endpoint = pub.getLastEndpoint();
        this.replay = context.createSocket(SocketType.ROUTER);
        replay.bind("tcp://127.0.0.1:*");
        this.replayEndpoint = replay.getLastEndpoint();
        this.poller = context.createPoller(1);
        poller.register(replay, ZMQ.Poller.POLLIN);
        this.thread = new Thread(this::run, "sim-vllm-kv-events");
        thread.setDaemon(true);
        thread.start();
    }

    /** The PUB socket, {@code tcp://127.0.0.1:port}: a router's {@code endpoint}. */
    String endpoint() {
        return endpoint;
    }

    /** The ROUTER replay socket: a router's {@code replay_endpoint}. */
    String replayEndpoint() {
        return replayEndpoint;
    }

    VllmKvGeneration generation() {
        return generation;
    }

    /** Batches sent on the PUB socket so far (not those {@link #dropNext} held back). */
    long published() {
        return published.get();
    }

    /** A batch and whether it goes out on the PUB socket (decided when it is queued). */
    private record Queued(byte[] batch, boolean send) {
    }

    /** Queues one encoded batch; any thread. */
    void publish(byte[] batch) {
        boolean lost = dropNext.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        queue.add(new Queued(batch, !lost));
    }

    /** The next {@code n} batches published get a sequence number and a replay slot but are not sent. */
    void dropNext(int n) {
        dropNext.addAndGet(n);
    }

    private void run() {
        try {
            while (running) {
                poller.poll(5);
                if (poller.pollin(0)) {
                    serveReplay();
                }
                for (Queued q = queue.poll(); q != null; q = queue.poll()) {
                    send(q);
                }
            }
        } finally {
            poller.close();
            pub.close();
            replay.close();
        }
    }

    private void send(Queued q) {
        byte[] s = be(seq++);
        kept.addLast(new byte[][] {s, q.batch()});
        if (kept.size() > bufferSteps) {
            kept.removeFirst();
        }
        if (!q.send()) {
            return;
        }
        pub.sendMore(topic);
        pub.sendMore(s);
        pub.send(q.batch());
        published.incrementAndGet();
    }

    private void serveReplay() {
        ZMsg request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT);
        if (request == null) {
            return;
        }
        if (request.size() != 3) {
            request.destroy(); // as upstream: a request of another shape is ignored
            return;
        }
        byte[] client = request.pop().getData();
        request.pop();
        long start = toLong(request.pop().getData());
        for (byte[][] entry : kept) {
            if (Long.compareUnsigned(toLong(entry[0]), start) >= 0) {
                reply(client, entry[0], entry[1]);
            }
        }
        reply(client, END, new byte[0]);
    }

    private void reply(byte[] client, byte[] s, byte[] batch) {
        replay.sendMore(client);
        replay.sendMore(new byte[0]);
        if (generation == VllmKvGeneration.MAP) {
            replay.sendMore(topic);
        }
        replay.sendMore(s);
        replay.send(batch);
    }

    private static byte[] be(long v) {
        byte[] out = new byte[8];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (v >>> (56 - 8 * i));
        }
        return out;
    }

    private static long toLong(byte[] b) {
        long v = 0;
        for (int i = 0; i < Math.min(8, b.length); i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }

    /** Stops the thread, which closes both sockets. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
