package dev.continuum.router.kv.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code transport: zmq} sources under the supervisor: started with the section, shown in the admin rows,
 * restarted when their entry changes on a reload (the backend's blocks go with the old stream) and stopped when
 * removed. The publisher is a JeroMQ XPUB (so the test waits for the subscription) with batches packed by
 * msgpack-core in vLLM's map layout.
 */
class EngineKvSupervisorTest {
    private final ZContext zmq = new ZContext(1);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private KvCacheIndexSupervisor supervisor;

    @AfterEach
    void close() {
        if (supervisor != null) {
            supervisor.stop().orTimeout(10, TimeUnit.SECONDS).join();
        }
        zmq.close();
    }

    private static byte[] stored(long hash) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(2).packString("ts").packDouble(2.5).packString("events").packArrayHeader(1);
            p.packMapHeader(5).packString("type").packString("BlockStored").packString("block_hashes")
                    .packArrayHeader(1).packLong(hash).packString("block_size").packInt(16)
                    .packString("group_idx").packInt(0).packString("token_ids").packArrayHeader(16);
            for (int i = 0; i < 16; i++) {
                p.packLong(hash * 100 + i);
            }
            return p.toByteArray();
        }
    }

    private static void send(ZMQ.Socket pub, String topic, long seq, byte[] batch) {
        byte[] s = new byte[8];
        for (int i = 0; i < 8; i++) {
            s[i] = (byte) (seq >>> (56 - 8 * i));
        }
        pub.sendMore(topic);
        pub.sendMore(s);
        pub.send(batch);
    }

    private static KvCacheIndexConfig config(KvCacheIndexConfig.Source... sources) {
        return new KvCacheIndexConfig(List.of(sources), 1000, 65_536);
    }

    @Test
    void startsShowsRestartsOnAChangedEntryAndStops() throws Exception {
        try (ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB)) {
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            KvCacheIndexConfig.Source a = KvCacheIndexConfig.Source.zmq("vllm-1",
                    new KvCacheIndexConfig.Zmq("tcp://127.0.0.1:" + port, null, "a"));
            supervisor = new KvCacheIndexSupervisor(new EventBus(), registry, config(a));
            supervisor.start().join();
            assertThat(pub.recv()).isEqualTo(new byte[] {1, 'a'});
            send(pub, "a", 0, stored(7));
            await().until(() -> supervisor.index().size("vllm-1") == 1);
            Map<String, Object> row = supervisor.adminView().get(0);
            assertThat(row).containsEntry("backend", "vllm-1").containsEntry("transport", "zmq")
                    .containsEntry("state", "connected").containsEntry("last_event_id", "0")
                    .containsEntry("blocks", 1);
            assertThat(supervisor.engineSources()).hasSize(1);
            assertThat(supervisor.sources()).isEmpty(); // no SSE source

            // Another topic: a new entry, so the source restarts; the old stream's blocks are forgotten.
            KvCacheIndexConfig.Source b = KvCacheIndexConfig.Source.zmq("vllm-1",
                    new KvCacheIndexConfig.Zmq("tcp://127.0.0.1:" + port, null, "b"));
            supervisor.reload(config(b));
            // The old subscription goes away and the new one arrives, in either order.
            List<String> changes = List.of(new String(pub.recv(), java.nio.charset.StandardCharsets.ISO_8859_1),
                    new String(pub.recv(), java.nio.charset.StandardCharsets.ISO_8859_1));
            assertThat(changes).containsExactlyInAnyOrder("\u0000a", "\u0001b");
            await().until(() -> supervisor.index().size("vllm-1") == 0);
            send(pub, "a", 1, stored(8)); // not its topic any more
            send(pub, "b", 0, stored(9));
            // Block 9 is indexed under the router's hash of its tokens.
            int[] tokens = new int[16];
            for (int i = 0; i < 16; i++) {
                tokens[i] = 900 + i;
            }
            long router = dev.continuum.router.kv.hash.BlockHasher.unsalted().blockHashes(tokens, 16)[0];
            await().until(() -> supervisor.index().overlap("vllm-1", new long[] {router}) == 1);
            assertThat(supervisor.index().size("vllm-1")).isEqualTo(1);

            supervisor.reload(config());
            await().until(() -> supervisor.index().size("vllm-1") == 0 && supervisor.adminView().isEmpty());
        }
    }
}
