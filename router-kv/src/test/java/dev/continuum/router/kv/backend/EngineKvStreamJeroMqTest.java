package dev.continuum.router.kv.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The same source in one JVM against JeroMQ sockets (an XPUB, so the test can wait for the subscription, and a
 * ROUTER replay socket served by the test thread), with batches packed by msgpack-core's packer in the layout of
 * vLLM before 0.26 ({@code [ts, events, rank]}, {@code [tag, fields...]}): an unknown tag is dropped, a gap
 * is filled by the replay, and the replay's duplicate of the held batch is skipped.
 */
class EngineKvStreamJeroMqTest {
    private final ZContext zmq = new ZContext(1);
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final DirectTcpConnector connector = DirectTcpConnector.builder().policy(CidrPolicy.allowAny()).build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final BackendKvIndex index = new BackendKvIndex();
    private final List<byte[][]> kept = new ArrayList<>();
    private EngineKvEventSource source;

    @AfterEach
    void close() {
        if (source != null) {
            source.stop();
        }
        connector.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        zmq.close();
    }

    private static byte[] batch(long hash, String tag) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3).packDouble(1.5).packArrayHeader(2);
            p.packArrayHeader(2).packString("BlockEvicted").packArrayHeader(1).packLong(99);
            p.packArrayHeader(6).packString(tag).packArrayHeader(1).packLong(hash).packNil()
                    .packArrayHeader(2).packLong(hash).packLong(hash + 1).packInt(2).packNil();
            p.packInt(0);
            return p.toByteArray();
        }
    }

    private static byte[] be(long v) {
        byte[] out = new byte[8];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (v >>> (56 - 8 * i));
        }
        return out;
    }

    private void publish(ZMQ.Socket pub, long seq, byte[] payload, boolean send) {
        kept.add(new byte[][] {be(seq), payload});
        if (send) {
            pub.sendMore("t");
            pub.sendMore(be(seq));
            pub.send(payload);
        }
    }

    @Test
    void fillsAGapFromAJeroMqReplaySocket() throws Exception {
        try (ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB); ZMQ.Socket router = zmq.createSocket(SocketType.ROUTER)) {
            int pubPort = pub.bindToRandomPort("tcp://127.0.0.1");
            int replayPort = router.bindToRandomPort("tcp://127.0.0.1");
            KvCacheIndexConfig.Source config = KvCacheIndexConfig.Source.zmq("sglang-1", new KvCacheIndexConfig.Zmq(
                    "tcp://127.0.0.1:" + pubPort, "tcp://127.0.0.1:" + replayPort, "t"));
            source = new EngineKvEventSource(config, connector, group.next(), index,
                    new KvSourceMetrics(registry, index), new EngineKvMetrics(registry), 100, 65_536,
                    Clock.systemUTC(), Duration.ofSeconds(5));
            source.start();
            assertThat(pub.recv()[0]).isEqualTo((byte) 1); // the subscription arrived

            publish(pub, 0, batch(10, "BlockStored"), true);
            await().until(() -> index.size("sglang-1") == 1);
            publish(pub, 1, batch(11, "BlockStored"), false); // lost
            publish(pub, 2, batch(12, "BlockStored"), true);

            // Serve the replay request as SGLang's publisher does: [id, "", start] in, [id, "", seq, batch] out.
            ZMsg request = ZMsg.recvMsg(router);
            assertThat(request.size()).isEqualTo(3);
            byte[] id = request.pop().getData();
            request.pop();
            byte[] start = request.pop().getData();
            assertThat(start).isEqualTo(be(1));
            for (byte[][] k : kept.subList(1, kept.size())) {
                router.sendMore(id);
                router.sendMore(new byte[0]);
                router.sendMore(k[0]);
                router.send(k[1]);
            }
            router.sendMore(id);
            router.sendMore(new byte[0]);
            router.sendMore(be(-1));
            router.send(new byte[0]);

            await().until(() -> registry.counter("continuum.kv.cache.index.engine.replays", "result", "recovered")
                    .count() == 1);
            for (long engine : new long[] {10, 11, 12}) {
                // Each block is known by the router's hash of its tokens (no parent: the block's own hash).
                long named = dev.continuum.router.kv.hash.BlockHasher.unsalted()
                        .blockHashes(new int[] {(int) engine, (int) engine + 1}, 2)[0];
                assertThat(source.routerHash(engine)).isEqualTo(named);
                assertThat(index.overlap("sglang-1", new long[] {named})).isEqualTo(1);
            }
            assertThat(index.size("sglang-1")).isEqualTo(3);
            // One unknown tag per batch, three batches applied; the held copy of 2 was a duplicate.
            assertThat(registry.counter("continuum.kv.cache.index.engine.drops", "reason", "unknown_tag").count())
                    .isEqualTo(3);
            assertThat(registry.counter("continuum.kv.cache.index.engine.drops", "reason", "duplicate").count())
                    .isEqualTo(1);
            assertThat(source.lastSequence()).isEqualTo(2L);
        }
    }
}
