package dev.continuum.router.load.bench;

import dev.continuum.router.load.Fixtures;
import dev.continuum.router.load.LoadBenchAccess;
import dev.continuum.router.load.LoadSupervisor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A measured main, outside the test run (no {@code @Test}); see docs/benchmarks.md for the command.
 *
 * <ol>
 *   <li>Decode throughput: a JeroMQ PUB on loopback sends N upstream-format kv_metrics messages as fast as
 *       it can; one subscription on a single event loop (one core) decodes them from socket bytes to store
 *       updates; messages/s from the first to the last applied.</li>
 *   <li>Heap per idle subscription and for 1024: 1024 publishers in a separate python3/libzmq process (so
 *       their memory is not in this heap); used heap after GC before and after 1024 subscriptions connect
 *       and go idle.</li>
 * </ol>
 */
public final class LoadSignalsBenchmark {
    private LoadSignalsBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        throughput(200_000); // warm-up
        double rate = throughput(messages);
        System.out.printf(Locale.ROOT, "decode throughput: %.0f messages/s (%d messages, one event loop)%n", rate,
                messages);
        heap(LoadSupervisor.MAX_SUBSCRIPTIONS);
    }

    private static double throughput(int n) throws Exception {
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket pub = zmq.createSocket(SocketType.PUB);
            pub.setSndHWM(0);
            pub.bind("tcp://127.0.0.1:*");
            String endpoint = pub.getLastEndpoint();
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
            try {
                supervisor.update(Fixtures.targets(1, List.of(Fixtures.publisher(7, "tcp://127.0.0.1:" + port)),
                        Fixtures.worker(1)));
                long seq = 0;
                while (supervisor.store().latest(Fixtures.worker(1), 0) == null) {
                    send(pub, Fixtures.message(7, seq++, Fixtures.activeLoad(1, 0, null, 1L)));
                    Thread.sleep(5);
                }
                double before = LoadBenchAccess.applied(supervisor);
                // Prebuilt messages whose sequence (frame 2 and the envelope's uint64) is patched in place,
                // so the sender is not the bottleneck.
                Template[] batch = new Template[64];
                for (int i = 0; i < batch.length; i++) {
                    batch[i] = new Template(Fixtures.activeLoad(1, i % 8, 100L + i, 4_000L + i));
                }
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    send(pub, batch[i & 63].withSequence(seq++));
                }
                while (LoadBenchAccess.applied(supervisor) - before < n) {
                    Thread.onSpinWait();
                }
                return n / ((System.nanoTime() - start) / 1e9);
            } finally {
                supervisor.stop().join();
            }
        }
    }

    /** One kv_metrics message with the envelope's sequence written as a fixed-width uint64. */
    private static final class Template {
        final byte[][] parts;
        final int sequenceAt;

        Template(byte[] activeLoad) throws java.io.IOException {
            try (org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(5);
                p.packString("publisher_id").packLong(7);
                p.packString("sequence");
                p.flush();
                int at = (int) p.getTotalWrittenBytes();
                p.writePayload(new byte[] {(byte) 0xcf, 0, 0, 0, 0, 0, 0, 0, 0});
                p.packString("published_at").packLong(1_790_000_000_000L);
                p.packString("topic").packString("kv_metrics");
                p.packString("payload").packBinaryHeader(activeLoad.length);
                p.writePayload(activeLoad);
                byte[] envelope = p.toByteArray();
                sequenceAt = 5 + at + 1;
                parts = new byte[][] {"kv_metrics".getBytes(StandardCharsets.US_ASCII), Fixtures.u64(7), new byte[8],
                    Fixtures.frame(envelope)};
            }
        }

        byte[][] withSequence(long seq) {
            for (int i = 0; i < 8; i++) {
                byte b = (byte) (seq >>> (56 - 8 * i));
                parts[2][i] = b;
                parts[3][sequenceAt + i] = b;
            }
            return parts;
        }
    }

    private static void send(ZMQ.Socket pub, byte[][] parts) {
        for (int i = 0; i < parts.length; i++) {
            pub.send(parts[i], i < parts.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    private static void heap(int count) throws Exception {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", """
                import sys, time, zmq
                ctx = zmq.Context()
                ctx.set(zmq.MAX_SOCKETS, 4096)
                socks = []
                for i in range(%d):
                    s = ctx.socket(zmq.PUB)
                    port = s.bind_to_random_port('tcp://127.0.0.1')
                    socks.append(s)
                    print(port)
                sys.stdout.flush()
                sys.stdin.read()
                """.formatted(count)).redirectErrorStream(true).start();
        List<Integer> ports = new ArrayList<>();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (int i = 0; i < count; i++) {
            ports.add(Integer.parseInt(r.readLine().trim()));
        }
        LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
        try {
            long baseline = usedHeapAfterGc();
            List<dev.continuum.router.discovery.DynamoPublisher> records = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                records.add(Fixtures.publisher(10_000 + i, "tcp://127.0.0.1:" + ports.get(i)));
            }
            supervisor.update(Fixtures.targets(1, records, Fixtures.worker(1)));
            while (LoadBenchAccess.connected(supervisor) < count) {
                Thread.sleep(50);
            }
            Thread.sleep(1_000);
            long loaded = usedHeapAfterGc();
            long total = loaded - baseline;
            System.out.printf(Locale.ROOT, "heap for %d idle subscriptions: %d bytes (%.1f KiB), %d bytes each%n",
                    count, total, total / 1024.0, total / count);
        } finally {
            supervisor.stop().join();
            p.destroy();
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
