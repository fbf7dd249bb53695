package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelSubscription;
import static dev.continuum.router.load.Fixtures.publisher;
import static dev.continuum.router.load.Fixtures.targets;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.ZContext;

/**
 * What an idle subscription holds in buffers, measured on a real connection with a counting allocator:
 * the Netty buffers still allocated while idle plus the ZMTP handler's assembly array, within the
 * 2,624 bytes of docs/decisions.md, also after a 10 KiB message grew the array.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BufferCostTest {
    @Test
    void anIdleSubscriptionHoldsAtMost2624BytesOfBuffersEvenAfterALargeMessage() throws IOException {
        UnpooledByteBufAllocator allocator = new UnpooledByteBufAllocator(true);
        try (ZContext zmq = new ZContext(1)) {
            TestPublisher pub = TestPublisher.bind(zmq, 7);
            DefaultLoadSupervisor supervisor = (DefaultLoadSupervisor) LoadSupervisor
                    .builder(new SimpleMeterRegistry())
                    .directConnector(policy -> DirectTcpConnector.builder().policy(policy).allocator(allocator).build())
                    .build();
            supervisor.start().join();
            try {
                supervisor.update(targets(1, List.of(publisher(7, pub.address())), worker(1)));
                await().pollInSameThread().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(10))
                        .until(() -> {
                            pub.publish(1, 0, null, 1L);
                            return supervisor.store().latest(worker(1), 0) != null;
                        });
                ChannelSubscription s = supervisor.subscription(publisher(7, "").id());
                long idle = idleBytes(allocator, s);

                pub.send(Fixtures.message(7, pub.nextSequence(), largeActiveLoad()));
                await().atMost(Duration.ofSeconds(10)).until(() ->
                        supervisor.store().latest(worker(1), 0).load().kvUsedBlocks() == 2L);
                long afterLarge = idleBytes(allocator, s);

                assertThat(idle).isLessThanOrEqualTo(ZmtpLimits.IDLE_SUBSCRIPTION_BUFFER_BYTES);
                assertThat(afterLarge).isLessThanOrEqualTo(ZmtpLimits.IDLE_SUBSCRIPTION_BUFFER_BYTES);
            } finally {
                supervisor.stop().join();
                pub.close();
            }
        }
    }

    private static long idleBytes(UnpooledByteBufAllocator allocator, ChannelSubscription s) {
        // Reads and writes finish on the event loop; wait until Netty holds nothing transient.
        await().atMost(Duration.ofSeconds(5)).until(() ->
                allocator.metric().usedHeapMemory() + allocator.metric().usedDirectMemory() == 0);
        return allocator.metric().usedHeapMemory() + allocator.metric().usedDirectMemory() + s.retainedBufferBytes();
    }

    /** An ActiveLoad with a 10 KiB unknown field (skipped by the decoder): a message that grows the buffer. */
    private static byte[] largeActiveLoad() throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("worker_id").packLong(1);
            p.packString("padding").packBinaryHeader(10 * 1024);
            p.writePayload(new byte[10 * 1024]);
            p.packString("kv_used_blocks").packLong(2);
            return p.toByteArray();
        }
    }
}
