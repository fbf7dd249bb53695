package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.LoadTargets;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.testing.DynamoEventWire;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * A measured program of the benchmarks jar (a main, not JMH); see docs/benchmarks.md for the command. Every
 * wait for a condition has a deadline, the fixed warm-up and measurement windows are deadlines on
 * {@link System#nanoTime}, and a watchdog halts the JVM past the overall budget, so it always ends; a
 * measurement that runs out of time reports what arrived.
 *
 * <ol>
 *   <li>{@code throughput N}: a raw ZMTP 3.0 PUB on loopback (a plain socket in this JVM: greeting, READY,
 *       then pre-encoded upstream-format kv_metrics messages written with TCP backpressure, so nothing is
 *       dropped) feeds one subscription on a single Netty event loop; socket bytes to store updates.
 *       Reports messages/s of wall time and per CPU-second of the event-loop thread, and bytes allocated
 *       per message on that thread.</li>
 *   <li>{@code heap N}: N idle PUB peers in a child JVM ({@link BenchPeers}, so their memory is not in this
 *       heap); used heap after {@code System.gc()} before and after N subscriptions connect and go idle.</li>
 *   <li>{@code storm N SECONDS}: N subscriptions against hostile peers in a child JVM (random bytes, ZMTP 2,
 *       2^63-1 and 2^64-1 byte frames, endless metadata, slowloris greetings), reconnecting with a short
 *       backoff for SECONDS; used heap after GC before, during and after.</li>
 * </ol>
 *
 * <p>Why not JeroMQ as the publisher: {@code ZMQ.Socket.send(byte[])} wraps the array without copying, so
 * the first version's in-place patching of the sequence rewrote messages still queued in the PUB; the
 * subscriber saw mostly duplicates (97,438 of 100,000 in a check), never reached the expected count, and
 * spun on it forever. A raw socket also keeps the sender's CPU cost near zero on a 2-core machine.
 */
public final class LoadSignalsBenchmark {
    private static final long PUBLISHER = 7;
    private static final String NS = "dynamo";
    private static final String TOPIC = "kv_metrics";

    private LoadSignalsBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "all";
        long budgetSeconds = Long.getLong("bench.budgetSeconds", 300);
        CountDownLatch finished = new CountDownLatch(1);
        Thread watchdog = new Thread(() -> {
            try {
                if (!finished.await(budgetSeconds, TimeUnit.SECONDS)) {
                    System.out.println("WATCHDOG: over the " + budgetSeconds + " s budget; halting");
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bench-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cpus, load average "
                + loadAverage() + ", java " + Runtime.version());
        switch (mode) {
            case "throughput" -> throughput(intArg(args, 1, 2_000_000));
            case "heap" -> heap(intArg(args, 1, LoadSupervisor.MAX_SUBSCRIPTIONS));
            case "storm" -> storm(intArg(args, 1, 1000), intArg(args, 2, 20));
            case "all" -> {
                throughput(2_000_000);
                heap(LoadSupervisor.MAX_SUBSCRIPTIONS);
                storm(1000, 20);
            }
            default -> throw new IllegalArgumentException("mode: " + mode + " (expected: throughput|heap|storm|all)");
        }
        System.out.println("load average at the end: " + loadAverage());
        finished.countDown();
        System.exit(0);
    }

    private static int intArg(String[] args, int i, int fallback) {
        return args.length > i ? Integer.parseInt(args[i]) : fallback;
    }

    // ---------------------------------------------------------------- throughput

    static void throughput(int n) throws Exception {
        int warmup = Math.max(200_000, n / 5);
        long total = (long) warmup + n;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("bench-loop"),
                NioIoHandler.newFactory());
        long loopThread = group.submit(() -> Thread.currentThread().getId()).get(10, TimeUnit.SECONDS);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        CountDownLatch stop = new CountDownLatch(1);
        AtomicLong sent = new AtomicLong();
        Thread feeder = new Thread(() -> feed(server, total, stop, sent), "bench-feeder");
        feeder.setDaemon(true);
        feeder.start();
        Outcomes outcomes = new Outcomes(new SimpleMeterRegistry());
        LoadSupervisor supervisor = LoadSupervisor.builder(outcomes.registry).eventLoopGroup(group).build();
        supervisor.start().join();
        try {
            supervisor.update(targets(1, List.of(publisher(PUBLISHER, "tcp://127.0.0.1:" + port))));
            if (!await(() -> outcomes.messages() >= warmup, Duration.ofSeconds(60))) {
                System.out.printf(Locale.ROOT, "throughput: warm-up incomplete after 60 s: %.0f of %d messages"
                        + " arrived, %d sent; results %s%n", outcomes.messages(), warmup, sent.get(),
                        outcomes.results());
                return;
            }
            double m0 = outcomes.messages();
            long t0 = System.nanoTime();
            long cpu0 = threads.getThreadCpuTime(loopThread);
            long alloc0 = threads.getThreadAllocatedBytes(loopThread);
            boolean complete = await(() -> outcomes.messages() >= total, Duration.ofSeconds(120));
            long t1 = System.nanoTime();
            long cpu1 = threads.getThreadCpuTime(loopThread);
            long alloc1 = threads.getThreadAllocatedBytes(loopThread);
            double measured = outcomes.messages() - m0;
            System.out.printf(Locale.ROOT, "throughput: %s%.0f messages measured after %d warm-up, raw ZMTP PUB on"
                            + " loopback -> one Netty event loop -> store%n",
                    complete ? "" : "INCOMPLETE (120 s deadline) ", measured, warmup);
            System.out.printf(Locale.ROOT, "  wall: %.0f messages/s (%.3f s)%n", measured / ((t1 - t0) / 1e9),
                    (t1 - t0) / 1e9);
            System.out.printf(Locale.ROOT, "  event-loop thread CPU: %.0f messages per CPU-second (%.3f CPU-s, %.0f%%"
                            + " of wall)%n", measured / ((cpu1 - cpu0) / 1e9), (cpu1 - cpu0) / 1e9,
                    100.0 * (cpu1 - cpu0) / (t1 - t0));
            System.out.printf(Locale.ROOT, "  allocated on the event loop: %.0f bytes/message%n",
                    (alloc1 - alloc0) / measured);
            System.out.println("  results: " + outcomes.results());
        } finally {
            stop.countDown();
            server.close();
            supervisor.stop().get(15, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            feeder.join(5_000);
        }
    }

    /** Accepts one subscriber and writes {@code total} messages (sequences 1..total), blocking on backpressure. */
    private static void feed(ServerSocketChannel server, long total, CountDownLatch stop, AtomicLong sent) {
        try (SocketChannel ch = server.accept()) {
            ch.socket().setTcpNoDelay(true);
            writeFully(ch, ByteBuffer.wrap(BenchPeers.concat(BenchPeers.greeting(3), BenchPeers.readyPub())));
            Wire[] templates = new Wire[8];
            for (int i = 0; i < templates.length; i++) {
                templates[i] = new Wire(DynamoEventWire.activeLoad(1, i, 100L + i, 4_000L + i));
            }
            ByteBuffer chunk = ByteBuffer.allocateDirect(64 * 1024);
            for (long seq = 1; seq <= total && stop.getCount() > 0; seq++) {
                Wire w = templates[(int) (seq & 7)];
                if (chunk.remaining() < w.bytes.length) {
                    chunk.flip();
                    writeFully(ch, chunk);
                    chunk.clear();
                }
                int at = chunk.position();
                chunk.put(w.bytes);
                chunk.putLong(at + w.frameSequenceAt, seq);
                chunk.putLong(at + w.envelopeSequenceAt, seq);
                sent.set(seq);
            }
            chunk.flip();
            writeFully(ch, chunk);
            stop.await(); // keep the connection open until the measurement is done
        } catch (IOException | InterruptedException e) {
            if (stop.getCount() > 0) {
                System.out.println("feeder: " + e);
            }
        }
    }

    private static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** One upstream-format kv_metrics message as ZMTP wire bytes, with the two sequence positions. */
    private static final class Wire {
        final byte[] bytes;
        final int frameSequenceAt;
        final int envelopeSequenceAt;

        Wire(byte[] activeLoad) throws IOException {
            int envelopeAt;
            byte[] envelope;
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(5);
                p.packString("publisher_id").packLong(PUBLISHER);
                p.packString("sequence");
                p.flush();
                envelopeAt = (int) p.getTotalWrittenBytes() + 1; // after the 0xcf marker
                p.writePayload(new byte[] {(byte) 0xcf, 0, 0, 0, 0, 0, 0, 0, 0}); // uint64, patched per message
                p.packString("published_at").packLong(1_790_000_000_000L);
                p.packString("topic").packString(TOPIC);
                p.packString("payload").packBinaryHeader(activeLoad.length);
                p.writePayload(activeLoad);
                envelope = p.toByteArray();
            }
            byte[][] parts = {TOPIC.getBytes(StandardCharsets.US_ASCII), DynamoEventWire.u64(PUBLISHER), new byte[8],
                DynamoEventWire.frame(envelope)};
            ByteBuffer b = ByteBuffer.allocate(4 * 9 + parts[0].length + 16 + parts[3].length);
            int frameSeq = 0;
            int envSeq = 0;
            for (int i = 0; i < parts.length; i++) {
                int more = i < parts.length - 1 ? 0x01 : 0x00;
                if (parts[i].length <= 255) {
                    b.put((byte) more).put((byte) parts[i].length);
                } else {
                    b.put((byte) (more | 0x02)).putLong(parts[i].length);
                }
                if (i == 2) {
                    frameSeq = b.position();
                }
                if (i == 3) {
                    envSeq = b.position() + 5 + envelopeAt; // after the frame's version and payload_len
                }
                b.put(parts[i]);
            }
            bytes = java.util.Arrays.copyOf(b.array(), b.position());
            frameSequenceAt = frameSeq;
            envelopeSequenceAt = envSeq;
        }
    }

    // ---------------------------------------------------------------- heap of idle subscriptions

    static void heap(int count) throws Exception {
        LoadSupervisor supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).build();
        supervisor.start().join();
        Peers peers = Peers.start("idle", count);
        try {
            // Warm-up: connect and tear down a few subscriptions first, so one-time costs (classes' static
            // state, the event loop's thread-local caches, the allocator's first chunk) are in the baseline.
            int warm = Math.min(16, count);
            supervisor.update(targets(1, publishers(1_000, warm, peers.ports)));
            await(() -> connected(supervisor) >= warm, Duration.ofSeconds(30));
            supervisor.update(targets(2, List.of()));
            await(() -> supervisor.subscriptions().isEmpty(), Duration.ofSeconds(20));
            pastStopGrace();
            long baseline = usedHeapAfterGc();
            supervisor.update(targets(3, publishers(10_000, count, peers.ports)));
            boolean all = await(() -> connected(supervisor) >= count, Duration.ofSeconds(90));
            long connected = connected(supervisor);
            long loaded = usedHeapAfterGc(); // collects until the heap stops shrinking: the handshakes' garbage is gone
            long delta = loaded - baseline;
            System.out.printf(Locale.ROOT, "heap: %s%d of %d subscriptions connected and idle; used heap after GC"
                            + " %d -> %d bytes: +%d bytes (%.1f KiB), %d bytes (%.2f KiB) per subscription%n",
                    all ? "" : "INCOMPLETE (90 s deadline) ", connected, count, baseline, loaded, delta, delta / 1024.0,
                    delta / Math.max(1, connected), delta / 1024.0 / Math.max(1, connected));
            long hold = Long.getLong("bench.holdSeconds", 0);
            if (hold > 0) { // time for `jcmd <pid> GC.class_histogram` while the subscriptions are idle
                System.out.println("  holding " + hold + " s, pid " + ProcessHandle.current().pid());
                holdFor(Duration.ofSeconds(Math.min(hold, 120)));
            }
        } finally {
            supervisor.stop().get(15, TimeUnit.SECONDS);
            System.out.println("  peers: " + peers.close());
        }
    }

    private static List<DynamoPublisher> publishers(long firstId, int count, List<Integer> ports) {
        List<DynamoPublisher> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(publisher(firstId + i, "tcp://127.0.0.1:" + ports.get(i % ports.size())));
        }
        return records;
    }

    // ---------------------------------------------------------------- hostile-peer storm

    static void storm(int count, int seconds) throws Exception {
        Outcomes outcomes = new Outcomes(new SimpleMeterRegistry());
        LoadSupervisor supervisor = LoadSupervisor.builder(outcomes.registry)
                .backoff(new Backoff(Duration.ofMillis(50), Duration.ofSeconds(1), Duration.ofSeconds(30))).build();
        supervisor.start().join();
        int ports = 8;
        Peers peers = Peers.start("hostile", ports);
        try {
            // Warm-up: a short storm first, so one-time costs are in the baseline; then the measured storm.
            supervisor.update(targets(1, publishers(1_000, count, peers.ports)));
            holdFor(Duration.ofSeconds(3)); // the warm-up storm's fixed length
            supervisor.update(targets(2, List.of()));
            await(() -> supervisor.subscriptions().isEmpty(), Duration.ofSeconds(20));
            pastStopGrace();
            long refusedBefore = (long) outcomes.refused();
            long before = usedHeapAfterGc();
            supervisor.update(targets(3, publishers(20_000, count, peers.ports)));
            List<String> during = new ArrayList<>();
            for (int third = 1; third <= 3; third++) {
                holdFor(Duration.ofMillis(seconds * 1000L / 3)); // a third of the measured storm
                during.add(usedHeapAfterGc() + " (" + ((long) outcomes.refused() - refusedBefore)
                        + " refused)");
            }
            supervisor.update(targets(4, List.of()));
            boolean drained = await(() -> supervisor.subscriptions().isEmpty(), Duration.ofSeconds(20));
            pastStopGrace();
            long after = usedHeapAfterGc();
            System.out.printf(Locale.ROOT, "storm: %d subscriptions x %d s against hostile peers (backoff 50 ms..1 s),"
                            + " after a 3 s warm-up storm: %d transport_refused in the measured storm%n", count, seconds,
                    (long) outcomes.refused() - refusedBefore);
            System.out.printf(Locale.ROOT, "  used heap after GC: before %d; during %s; after teardown %d%s"
                            + " (after - before = %+d bytes)%n", before, String.join(", ", during), after,
                    drained ? "" : " (subscriptions not yet torn down after 20 s)", after - before);
            System.out.println("  results (warm-up and measured): " + outcomes.results());
        } finally {
            supervisor.stop().get(15, TimeUnit.SECONDS);
            System.out.println("  peers (warm-up and measured): " + peers.close());
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The child JVM running {@link BenchPeers}. */
    private static final class Peers {
        final Process process;
        final List<Integer> ports;
        final BlockingQueue<String> lines;

        private Peers(Process process, List<Integer> ports, BlockingQueue<String> lines) {
            this.process = process;
            this.ports = ports;
            this.lines = lines;
        }

        static Peers start(String mode, int count) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    BenchPeers.class.getName(), mode, Integer.toString(count), "280").redirectErrorStream(true).start();
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the child is gone
                }
            }, "bench-peers-reader");
            reader.setDaemon(true);
            reader.start();
            List<Integer> ports = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (ports.size() < count) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    p.destroyForcibly();
                    throw new IllegalStateException("peers: " + ports.size() + " of " + count + " ports in 60 s");
                }
                try {
                    ports.add(Integer.parseInt(line.trim()));
                } catch (NumberFormatException e) {
                    System.out.println("  peers said: " + line);
                }
            }
            return new Peers(p, ports, lines);
        }

        /** Closes the child's stdin (it reports and exits), waits up to 10 s, and returns its report. */
        String close() throws Exception {
            process.getOutputStream().close();
            String report = lines.poll(10, TimeUnit.SECONDS);
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            return report == null ? "(no report)" : report;
        }
    }

    private static WorkerId worker() {
        return new WorkerId(NS, 1);
    }

    private static DynamoPublisher publisher(long publisherId, String address) {
        return new DynamoPublisher(new PublisherId(NS, publisherId), PublisherTopic.KV_METRICS, "decode", "generate",
                address);
    }

    /** The publishers' targets for the one live worker, declaring ranks 0 to 7 (the samples use those). */
    private static LoadTargets targets(long generation, List<DynamoPublisher> publishers) {
        return new LoadTargets(generation, publishers, Map.of(worker(), new DpRanks(0, 8)));
    }

    private static long connected(LoadSupervisor supervisor) {
        return supervisor.subscriptions().stream().filter(s -> s.state() == SubscriptionState.CONNECTED).count();
    }

    /** The supervisor's outcome counters, read from its registry ({@code continuum_dynamo_load_events_total}). */
    private static final class Outcomes {
        private static final String EVENTS = "continuum.dynamo.load.events";
        private static final String REFUSED = "transport_refused";
        final MeterRegistry registry;

        Outcomes(MeterRegistry registry) {
            this.registry = registry;
        }

        /** Every message outcome so far (everything but transport_refused), summed. */
        double messages() {
            double sum = 0;
            for (Counter c : registry.find(EVENTS).counters()) {
                if (!REFUSED.equals(c.getId().getTag("result"))) {
                    sum += c.count();
                }
            }
            return sum;
        }

        double refused() {
            Counter c = registry.find(EVENTS).tag("result", REFUSED).counter();
            return c == null ? 0 : c.count();
        }

        /** The non-zero series by result label. */
        Map<String, Long> results() {
            Map<String, Long> out = new LinkedHashMap<>();
            for (Counter c : registry.find(EVENTS).counters()) {
                long v = (long) c.count();
                if (v != 0) {
                    out.put(String.valueOf(c.getId().getTag("result")), v);
                }
            }
            return out;
        }
    }

    /** Polls every millisecond until {@code condition} holds or {@code timeout} passes; false on the timeout. */
    private static boolean await(Callable<Boolean> condition, Duration timeout) {
        try {
            Awaitility.await().atMost(timeout).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                    .until(condition);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    /**
     * Lets a fixed span of time pass (a warm-up or measurement window, or a grace period nothing signals the end
     * of): a deadline on {@link System#nanoTime}, parking for what is left, so an early wake-up cannot shorten it.
     */
    private static void holdFor(Duration span) {
        long deadline = System.nanoTime() + span.toNanos();
        for (long left = span.toNanos(); left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * Lets {@link LoadSupervisor#STOP_GRACE} pass: each stopped subscription stays reachable from its grace timer
     * until then, which would otherwise count in a heap measurement taken right after a teardown. Nothing public
     * signals that the timers ran, so this is a deadline, one second past the grace.
     */
    private static void pastStopGrace() {
        holdFor(LoadSupervisor.STOP_GRACE.plusSeconds(1));
    }

    /**
     * Used heap once full collections stop freeing anything that matters: {@code System.gc()} (a full collection
     * with G1 and the serial/parallel GCs) at least three times and until a collection frees less than 64 KiB,
     * at most ten times. What the old fixed pauses between collections waited for (references cleared by one
     * collection, freed by the next) is this condition.
     */
    private static long usedHeapAfterGc() {
        var memory = ManagementFactory.getMemoryMXBean();
        long previous = Long.MAX_VALUE;
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            used = memory.getHeapMemoryUsage().getUsed();
            if (i >= 2 && previous - used < 64 * 1024) {
                break;
            }
            previous = used;
        }
        return used;
    }

    private static String loadAverage() {
        return String.format(Locale.ROOT, "%.2f (1 min)",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
