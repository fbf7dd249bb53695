package dev.continuum.router.app;

import static org.awaitility.Awaitility.await;

import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.eventplane.SubscriptionState;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay-overhead benchmark of docs/benchmarks.md, on {@link EventBrokerEndToEndTest}'s fleet: six JeroMQ
 * kv_metrics publishers in this JVM, each message read both by a direct-transport load supervisor and, through
 * the broker OS process and the router's event bus, by a broker-transport one. Messages go out at
 * {@code -Drate} per second in total (default 10,000, in bursts every millisecond) for {@code -Dseconds}
 * (default 20); each carries its send time, and the store's receipt time of the samples seen (the latest per
 * publisher, read before every burst) gives the delivery latency of each path. Prints p50/p99/max per path and
 * the broker's added p99, and CPU per message: the router's event-bus threads (TLS, HTTP/2 and the ZMTP decode
 * of relayed streams) against its load threads (the ZMTP decode of direct connections), and the broker process
 * (from /proc, in clock ticks of 10 ms). Netty's leak detection is off in this JVM unless {@code -DleakDetection}
 * names a level: the suite's paranoid level would be measured instead of the relay.
 *
 * <p>Not part of the suite; run it with
 * {@code ./mvnw -B -ntp -o -q -pl router-app -am test -Dtest=EventBusRelayBench -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class EventBusRelayBench {
    private static final long CLOCK_TICK_NANOS = 10_000_000; // USER_HZ 100 on Linux

    @TempDir
    Path dir;

    @Test
    void relayedAgainstDirectDelivery() throws Exception {
        int rate = Integer.getInteger("rate", 10_000);
        int seconds = Integer.getInteger("seconds", 20);
        // The suite's argLine sets paranoid leak detection, which records a stack trace at every touch of every
        // buffer: the relayed path (TLS records, HTTP/2 frames, child-channel hand-over) touches several buffers
        // per message where the direct path touches one, so paranoid tracking is billed to the relay. The
        // benchmark measures the relay, not the detector; -DleakDetection=paranoid restores it for an A/B.
        ResourceLeakDetector.Level leaks = ResourceLeakDetector.Level.valueOf(
                System.getProperty("leakDetection", "disabled").toUpperCase(java.util.Locale.ROOT));
        ResourceLeakDetector.setLevel(leaks);
        System.out.printf("relay: Netty leak detection %s in the router's JVM%n", leaks);
        EventBrokerEndToEndTest fleet = new EventBrokerEndToEndTest();
        fleet.dir = dir;
        fleet.setUp();
        try {
            Process broker = fleet.startBroker("broker-a", "broker-a", EventBrokerEndToEndTest.TOKEN_A);
            await().atMost(Duration.ofSeconds(120)).until(() -> fleet.all(fleet.broker,
                    SubscriptionState.CONNECTED) && fleet.all(fleet.direct,
                    SubscriptionState.CONNECTED));
            fleet.warmUp(1);
            run(fleet, broker, rate, 3, false); // warm-up of the JIT on both paths
            run(fleet, broker, rate, seconds, true);
        } finally {
            fleet.tearDown();
        }
    }

    private static void run(EventBrokerEndToEndTest fleet, Process broker, int rate, int seconds, boolean report)
            throws IOException {
        int n = fleet.publishers.size();
        long[] lastDirect = new long[n];
        long[] lastBroker = new long[n];
        long[] direct = new long[rate * seconds];
        long[] relayed = new long[rate * seconds];
        int directCount = 0;
        int relayedCount = 0;
        int perBurst = Math.max(1, rate / 1000);
        long base = System.nanoTime();
        long busCpu = threadCpu("continuum-event-bus");
        long loadCpu = threadCpu("continuum-load");
        long brokerTicks = procTicks(broker.pid());
        long sent = 0;
        for (int ms = 0; ms < seconds * 1000; ms++) {
            long due = base + ms * 1_000_000L;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            for (int i = 0; i < n; i++) {
                WorkerPod p = fleet.publishers.get(i);
                directCount = sample(fleet.direct, p, base, lastDirect, i, direct, directCount);
                relayedCount = sample(fleet.broker, p, base, lastBroker, i, relayed, relayedCount);
            }
            for (int k = 0; k < perBurst; k++) {
                WorkerPod p = fleet.publishers.get((int) (sent++ % n));
                // The send time in 100 ns units since base, as kv_used_blocks.
                p.publish(p.publisherId, p.sequence++, (System.nanoTime() - base) / 100);
            }
        }
        long elapsed = System.nanoTime() - base;
        busCpu = threadCpu("continuum-event-bus") - busCpu;
        loadCpu = threadCpu("continuum-load") - loadCpu;
        brokerTicks = procTicks(broker.pid()) - brokerTicks;
        if (!report) {
            return;
        }
        long[] d = Arrays.copyOf(direct, directCount);
        long[] r = Arrays.copyOf(relayed, relayedCount);
        Arrays.sort(d);
        Arrays.sort(r);
        System.out.printf("relay: %d messages in %.1f s (%.0f/s); latency samples direct %d, broker %d%n", sent,
                elapsed / 1e9, sent / (elapsed / 1e9), d.length, r.length);
        System.out.printf("  direct p50 %.3f ms, p99 %.3f ms, max %.3f ms%n", pct(d, 0.50), pct(d, 0.99), pct(d, 1));
        System.out.printf("  broker p50 %.3f ms, p99 %.3f ms, max %.3f ms%n", pct(r, 0.50), pct(r, 0.99), pct(r, 1));
        System.out.printf("  added p99 %.3f ms (goal <= 2 ms)%n", pct(r, 0.99) - pct(d, 0.99));
        System.out.printf("  CPU per message: router event-bus threads %.2f us (relayed), router load threads "
                        + "%.2f us (direct), broker process %.2f us%n", busCpu / 1e3 / sent, loadCpu / 1e3 / sent,
                brokerTicks * CLOCK_TICK_NANOS / 1e3 / sent);
    }

    /** Records the latency of the publisher's latest sample in {@code store} if it is one not seen before. */
    private static int sample(LoadSupervisor store, WorkerPod p, long base, long[] last,
                              int i, long[] out, int count) {
        LoadSample s = store.store().latest(p.worker(), 0);
        if (s == null || s.sequence() == last[i] || count == out.length) {
            return count;
        }
        last[i] = s.sequence();
        Long sentAt = s.load().kvUsedBlocks();
        if (sentAt == null) {
            return count;
        }
        out[count] = s.receivedNanos() - (base + sentAt * 100);
        return count + 1;
    }

    private static double pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int at = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, at)] / 1e6;
    }

    /** CPU time of this JVM's threads whose names start with {@code prefix}, in nanoseconds. */
    private static long threadCpu(String prefix) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith(prefix)) {
                total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return total;
    }

    /** utime + stime of a process from /proc/PID/stat, in clock ticks. */
    private static long procTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
