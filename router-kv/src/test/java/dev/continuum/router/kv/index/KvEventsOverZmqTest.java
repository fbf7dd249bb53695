package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.events.KvWire;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpEndpoint;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpListener;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.eventplane.zmtp.ZmtpSubscriberHandler;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * End to end over a real ZMQ peer: a JeroMQ PUB socket sends upstream-framed kv-events (four frames, msgpack
 * envelope and RouterEvent), the router's own bounded ZMTP subscriber (router-load, with the kv-events limits)
 * receives them, and {@link KvIndexWriter} indexes them for a lookup.
 */
class KvEventsOverZmqTest {
    private static final PublisherId P = new PublisherId("dynamo", 0x51L);

    @Test
    void eventsFromAJeroMqPublisherReachTheIndex() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        KvIndexWriter writer = new KvIndexWriter(new SimpleMeterRegistry(), IndexLimits.DEFAULT);
        writer.start().join();
        writer.onFleet(Map.of(new WorkerId("dynamo", 7), new DpRanks(0, 2)), 1);
        AtomicBoolean connected = new AtomicBoolean();
        ZmtpListener listener = new ZmtpListener() {
            @Override
            public void onConnected() {
                connected.set(true);
            }

            @Override
            public void onMessage(ZmtpMessage message) {
                writer.onMessage(P, message);
            }

            @Override
            public void onRefused(String reason) {
                throw new AssertionError("refused: " + reason);
            }
        };
        try (ZContext context = new ZContext(); DirectTcpConnector connector = DirectTcpConnector.builder().build()) {
            ZMQ.Socket pub = context.createSocket(SocketType.PUB);
            pub.setLinger(0);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            Channel channel = connector.connect(new ZmtpTarget("dynamo", new ZmtpEndpoint("127.0.0.1", port),
                    "kv-events"), group.next(), new ZmtpSubscriberHandler(ZmtpLimits.KV_EVENTS,
                    "kv-events".getBytes(StandardCharsets.US_ASCII), listener)).get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(connected::get);

            long[] tokens = {11, 12, 13, 14};
            byte[] stored = KvWire.stored(7, 3, 1, null, new long[] {-1L, -2L, -3L, -4L}, tokens);
            OverlapScores out = new OverlapScores(8);
            // A SUB's subscription reaches the PUB asynchronously: resend (the same event_id applies idempotently)
            // until the event lands.
            long[] sequence = {0};
            await().atMost(Duration.ofSeconds(20)).pollInSameThread().untilAsserted(() -> {
                send(pub, KvWire.frames(P.publisherId(), sequence[0]++, stored));
                writer.index().findMatches(new BlockHashes(16, tokens), out);
                assertThat(out.matchedBlocksOf(7, 1)).isEqualTo(4);
            });
            send(pub, KvWire.frames(P.publisherId(), sequence[0]++, KvWire.removed(7, 4, 1, -3L)));
            await().atMost(Duration.ofSeconds(10)).pollInSameThread().untilAsserted(() -> {
                writer.index().findMatches(new BlockHashes(16, tokens), out);
                assertThat(out.matchedBlocksOf(7, 1)).isEqualTo(2);
            });
            channel.close().sync();
        } finally {
            writer.stop().join();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static void send(ZMQ.Socket pub, byte[][] frames) {
        for (int i = 0; i < frames.length; i++) {
            pub.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }
}
