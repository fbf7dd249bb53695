package dev.continuum.router.app;

import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.BusSession;
import dev.continuum.router.eventbus.config.EventBusConfig;
import dev.continuum.router.eventplane.SubscriptionState;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The heap benchmark of docs/benchmarks.md: 1,024 kv_metrics streams over 4 broker sessions (four broker OS
 * processes) on {@link EventBrokerEndToEndTest}'s fleet with {@code -Dpublishers} (default 1,024) JeroMQ
 * publishers. The router's heap after a full GC is read with every broker subscription pending (no broker yet)
 * and again with all of them connected through the four brokers after every publisher sent a round of
 * messages; the difference is what the bus and its streams hold, set against {@code max_session_buffer_bytes}
 * per session. Netty's pooled direct memory is reported beside it.
 *
 * <p>Not part of the suite; run it with
 * {@code ./mvnw -B -ntp -o -q -pl router-app -am test -Dtest=EventBusHeapBench -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class EventBusHeapBench {
    private static final List<String> BROKERS = List.of("broker-a", "broker-b", "broker-c", "broker-d");

    @TempDir
    Path dir;

    @Test
    void heapOfTheBusWithAllStreamsOpen() throws Exception {
        EventBrokerEndToEndTest fleet = new EventBrokerEndToEndTest();
        fleet.publisherCount = Integer.getInteger("publishers", 1024);
        fleet.dir = dir;
        fleet.setUp();
        try {
            int n = fleet.publisherCount;
            await().atMost(Duration.ofSeconds(300)).until(() -> fleet.all(fleet.direct, SubscriptionState.CONNECTED)
                    && fleet.all(fleet.broker, SubscriptionState.PENDING));
            long before = heapAfterGc();
            long directBefore = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();

            for (String b : BROKERS) {
                fleet.startBroker(b, b, EventBrokerEndToEndTest.token(b));
            }
            await().atMost(Duration.ofSeconds(600)).until(() -> fleet.all(fleet.broker, SubscriptionState.CONNECTED));
            for (WorkerPod p : fleet.publishers) {
                p.publish(p.publisherId, p.sequence++, 1);
            }
            await().atMost(Duration.ofSeconds(120)).until(() -> fleet.publishers.stream().allMatch(p -> {
                var s = fleet.broker.store().latest(p.worker(), 0);
                return s != null && Long.valueOf(1).equals(s.load().kvUsedBlocks());
            }));
            long after = heapAfterGc();
            long directAfter = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();

            List<String> perSession = new ArrayList<>();
            for (BusSession s : fleet.bus.bus().sessions()) {
                perSession.add(s.entryId() + "=" + s.streamCount());
            }
            long limit = EventBusConfig.DEFAULT_MAX_SESSION_BUFFER_BYTES;
            long delta = after - before;
            System.out.printf("heap: %d streams over %d sessions (%s); router heap after full GC %d -> %d bytes, "
                            + "the bus and its streams %d bytes = %d per session (max_session_buffer_bytes %d: %s); "
                            + "%.0f bytes per stream; Netty pooled direct memory %d -> %d bytes%n",
                    n, BROKERS.size(), perSession, before, after, delta, delta / BROKERS.size(), limit,
                    delta / BROKERS.size() <= limit ? "within" : "above", (double) delta / n, directBefore,
                    directAfter);
        } finally {
            fleet.tearDown();
        }
    }

    private static long heapAfterGc() {
        var memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        // Several collections: the lowest reading is the live set.
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
