package dev.continuum.router.kv.backend;

import static dev.continuum.router.kv.backend.EnginePublisherProcess.removed;
import static dev.continuum.router.kv.backend.EnginePublisherProcess.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@code transport: zmq} source against an independent publisher: python3-zmq (libzmq) and python3-msgpack
 * write both generations of vLLM's encoding (array-like events as SGLang and vLLM before 0.26 send them; tagged
 * maps and topic-framed replay replies from vLLM 0.26), with a real ROUTER replay socket answering gaps, and
 * hostile frames. Every bad record is counted and skipped; nothing else is affected.
 */
class EngineKvStreamPythonTest {
    private static final String BACKEND = "vllm-1";
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final DirectTcpConnector connector = DirectTcpConnector.builder().policy(CidrPolicy.allowAny()).build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final BackendKvIndex index = new BackendKvIndex();
    private EngineKvEventSource source;
    private EnginePublisherProcess engine;

    @AfterEach
    void close() {
        if (source != null) {
            source.stop();
        }
        if (engine != null) {
            engine.close();
        }
        connector.close();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    private void start(String generation, boolean replay) throws Exception {
        engine = new EnginePublisherProcess(generation, "kv");
        KvCacheIndexConfig.Source config = KvCacheIndexConfig.Source.zmq(BACKEND, new KvCacheIndexConfig.Zmq(
                "tcp://127.0.0.1:" + engine.pubPort,
                replay ? "tcp://127.0.0.1:" + engine.replayPort : null, "kv"));
        source = new EngineKvEventSource(config, connector, group.next(), index,
                new KvSourceMetrics(registry, index), new EngineKvMetrics(registry), 1000, 1024,
                Clock.systemUTC(), Duration.ofSeconds(5));
        source.start();
        assertThat(engine.send("{\"op\":\"await_sub\"}")).isEqualTo("subscribed");
    }

    private double count(String name, String tag, String value) {
        var c = registry.find(name).tag(tag, value).counter();
        return c == null ? 0 : c.count();
    }

    private double count(String name) {
        var c = registry.find(name).counter();
        return c == null ? 0 : c.count();
    }

    /** Whether the index holds the router's names of these engine blocks (EngineBlockMap translates them). */
    private boolean holds(long... engineHashes) {
        long[] router = new long[engineHashes.length];
        for (int i = 0; i < router.length; i++) {
            Long r = source.routerHash(engineHashes[i]);
            if (r == null) {
                return false;
            }
            router[i] = r;
        }
        return index.overlap(BACKEND, router) == router.length;
    }

    @ParameterizedTest
    @ValueSource(strings = {"array", "map"})
    void appliesBatchesAndFillsAGapFromTheReplaySocket(String generation) throws Exception {
        start(generation, true);
        engine.batch(0, true, stored("1,2", "null", 2, 4));
        // Above 2^63: an unsigned hash keeps its bit pattern.
        engine.batch(1, true, stored("18446744073709551615", "2", 1, 4));
        await().until(() -> index.size(BACKEND) == 3);
        assertThat(holds(1, 2, -1L)).isTrue();

        // Batch 2 is lost on the way (buffered for replay, never published); 3 reveals the gap.
        engine.batch(2, false, removed("18446744073709551615"));
        engine.batch(3, true, stored("4", "2", 1, 4));
        await().until(() -> count("continuum.kv.cache.index.engine.replays", "result", "recovered") == 1);
        assertThat(holds(1, 2, 4)).isTrue();
        assertThat(holds(-1L)).isFalse();
        assertThat(count("continuum.kv.cache.index.engine.gaps")).isEqualTo(1);
        assertThat(source.lastSequence()).isEqualTo(3L);
        // The held live copy of batch 3 arrived before the replay finished: dropped as a duplicate.
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "duplicate")).isEqualTo(1);
        assertThat(count("continuum.kv.cache.index.engine.events", "kind", "removed")).isEqualTo(1);

        engine.batch(4, true, "{\"type\":\"AllBlocksCleared\"}," + stored("9", "null", 1, 4));
        await().until(() -> source.lastSequence() == 4L);
        assertThat(index.size(BACKEND)).isEqualTo(1);
        assertThat(holds(9)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"array", "map"})
    void dropsAndCountsHostileRecordsWithoutLosingTheSource(String generation) throws Exception {
        start(generation, true);
        engine.batch(0, true, stored("1", "null", 1, 4));
        // An unknown tag and a wrong-typed event next to a good one: only the good one applies.
        String unknown = generation.equals("array") ? "{\"raw\":[\"BlockMoved\",[7]]}"
                : "{\"raw\":{\"type\":\"BlockMoved\",\"block_hashes\":[7]}}";
        String wrongType = generation.equals("array") ? "{\"raw\":[\"BlockStored\",\"not-a-list\",null,[],4]}"
                : "{\"raw\":{\"type\":\"BlockStored\",\"block_hashes\":{\"a\":1},\"block_size\":4}}";
        // Token IDs that do not fill the blocks they claim: the wrong arity of a stored event.
        String wrongArity = "{\"type\":\"BlockStored\",\"hashes\":[8,9],\"parent\":null,\"tokens\":[1,2,3],"
                + "\"block_size\":4}";
        engine.batch(1, true, unknown + "," + wrongType + "," + wrongArity + "," + stored("2", "1", 1, 4));
        await().until(() -> source.lastSequence() == 1L);
        assertThat(holds(1, 2)).isTrue();
        assertThat(index.size(BACKEND)).isEqualTo(2);
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "unknown_tag")).isEqualTo(1);
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "wrong_type")).isEqualTo(2);

        // Not msgpack at all, a batch that is not [ts, events...], a payload over max_event_bytes (1 KiB here),
        // and a message without a sequence frame.
        String seq2 = "0000000000000002";
        String seq3 = "0000000000000003";
        String seq4 = "0000000000000004";
        String topic = HexFormat.of().formatHex("kv".getBytes());
        engine.send("{\"op\":\"raw\",\"frames\":[\"" + topic + "\",\"" + seq2 + "\",\"c1c1\"]}");
        engine.send("{\"op\":\"raw\",\"frames\":[\"" + topic + "\",\"" + seq3 + "\",\"9101\"]}");
        engine.send("{\"op\":\"raw\",\"frames\":[\"" + topic + "\",\"" + seq4 + "\",\"" + "00".repeat(2048) + "\"]}");
        engine.send("{\"op\":\"raw\",\"frames\":[\"" + topic + "\",\"00\"]}");
        engine.batch(5, true, stored("3", "2", 1, 4));
        await().until(() -> source.lastSequence() == 5L);
        assertThat(holds(1, 2, 3)).isTrue();
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "malformed")).isEqualTo(2);
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "oversized")).isEqualTo(1);
        assertThat(count("continuum.kv.cache.index.engine.drops", "reason", "bad_frame")).isEqualTo(1);
        assertThat(count("continuum.kv.cache.index.engine.gaps")).isZero();

        // A frame above the ZMTP bound (1 MiB): the connection is refused and re-dialled; the index stays.
        engine.send("{\"op\":\"raw\",\"frames\":[\"" + topic + "\",\"" + "00".repeat(1024 * 1024 + 1) + "\"]}");
        assertThat(engine.send("{\"op\":\"await_sub\"}")).isEqualTo("subscribed");
        engine.batch(6, true, stored("4", "3", 1, 4));
        await().until(() -> source.lastSequence() == 6L);
        assertThat(holds(1, 2, 3, 4)).isTrue();
        assertThat(source.view().failures().get("protocol")).isEqualTo(1L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"array", "map"})
    void wrapsRestartsAndClearsOnAnUnrecoverableGap(String generation) throws Exception {
        start(generation, true);
        // The sequence wraps from 2^64 - 1 to 0 without a gap.
        engine.batch(-1L, true, stored("1", "null", 1, 4));
        engine.batch(0, true, stored("2", "1", 1, 4));
        await().until(() -> Long.valueOf(0).equals(source.lastSequence()));
        assertThat(holds(1, 2)).isTrue();
        assertThat(count("continuum.kv.cache.index.engine.gaps")).isZero();
        assertThat(count("continuum.kv.cache.index.engine.restarts")).isZero();

        // Batches 1..2 are lost and the engine's buffer no longer has them: the backend is cleared.
        engine.send("{\"op\":\"forget\"}");
        engine.batch(3, true, stored("5", "null", 1, 4));
        await().until(() -> count("continuum.kv.cache.index.engine.replays", "result", "failed") == 1);
        assertThat(index.size(BACKEND)).isEqualTo(1);
        assertThat(holds(5)).isTrue();

        // A sequence that goes back: the engine restarted with an empty cache.
        engine.batch(0, true, stored("6", "null", 1, 4));
        await().until(() -> count("continuum.kv.cache.index.engine.restarts") == 1);
        assertThat(index.size(BACKEND)).isEqualTo(1);
        assertThat(holds(6)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"array"})
    void withoutAReplaySocketAGapClearsTheBackend(String generation) throws Exception {
        start(generation, false);
        engine.batch(0, true, stored("1", "null", 1, 4));
        await().until(() -> holds(1));
        engine.batch(2, true, stored("2", "null", 1, 4));
        await().until(() -> count("continuum.kv.cache.index.engine.replays", "result", "unavailable") == 1);
        assertThat(index.size(BACKEND)).isEqualTo(1);
        assertThat(holds(2)).isTrue();
    }
}
