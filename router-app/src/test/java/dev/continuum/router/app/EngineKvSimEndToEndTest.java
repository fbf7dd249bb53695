package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.backend.EngineKvEventSource;
import dev.continuum.router.kv.backend.EngineKvMetrics;
import dev.continuum.router.kv.backend.KvSourceMetrics;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.sim.VllmKvEngine;
import dev.continuum.router.sim.VllmKvGeneration;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The simulator's plain vLLM engine (router-sim {@link VllmKvEngine}, its own vLLM-native publisher and replay
 * socket) feeding a {@code transport: zmq} source: after prompts, an eviction, a lost batch the replay fills and
 * a clear, the router's index holds for each prompt exactly the prefix the engine's cache holds.
 */
class EngineKvSimEndToEndTest {
    private static final int BLOCK = 16;

    private static int[] prompt(int seed, int tokens) {
        return IntStream.range(0, tokens).map(i -> seed * 100_000 + i).toArray();
    }

    @ParameterizedTest
    @EnumSource(VllmKvGeneration.class)
    void theIndexFollowsTheSimulatedEnginesCache(VllmKvGeneration generation) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        BackendKvIndex index = new BackendKvIndex();
        try (VllmKvEngine engine = new VllmKvEngine(generation, BLOCK, 64, "");
             DirectTcpConnector connector = DirectTcpConnector.builder().policy(CidrPolicy.allowAny()).build()) {
            EngineKvEventSource source = new EngineKvEventSource(
                    KvCacheIndexConfig.Source.zmq("vllm-sim", new KvCacheIndexConfig.Zmq(engine.endpoint(),
                            engine.replayEndpoint(), "")),
                    connector, group.next(), index, new KvSourceMetrics(registry, index),
                    new EngineKvMetrics(registry), 10_000, 65_536, Clock.systemUTC(), Duration.ofSeconds(5));
            source.start();
            try {
                // A PUB drops what it sends before the subscription lands: serve until the index hears of one.
                int[] probe = {1000};
                await().until(() -> {
                    engine.serve(prompt(probe[0]++, BLOCK));
                    return index.size("vllm-sim") > 0;
                });
                List<int[]> prompts = List.of(prompt(1, 20 * BLOCK), prompt(2, 30 * BLOCK + 5), prompt(1, 24 * BLOCK));
                engine.serve(prompts.get(0));
                engine.dropNext(1); // prompt 2's stored batch is lost on the way
                engine.serve(prompts.get(1));
                engine.serve(prompts.get(2)); // prompt 1 again, 4 blocks longer: reveals the gap
                await().until(() -> registry.counter("continuum.kv.cache.index.engine.replays", "result",
                        "recovered").count() == 1);
                for (int[] p : prompts) {
                    // The index names blocks the router's way (chained XXH3 of their tokens), not the engine's
                    // (seeded per engine, as vLLM's are).
                    long[] own = dev.continuum.router.kv.hash.BlockHasher.unsalted().blockHashes(p, BLOCK);
                    long[] blocks = dev.continuum.router.kv.hash.BlockHasher.sequenceHashes(own, own.length);
                    assertThat(blocks).doesNotContain(engine.blockHashes(p));
                    await().untilAsserted(() -> assertThat(index.overlap("vllm-sim", blocks))
                            .isEqualTo(engine.cachedPrefix(p)));
                }
                assertThat(index.size("vllm-sim")).isLessThanOrEqualTo(64);

                engine.clear();
                await().until(() -> index.size("vllm-sim") == 0);
                assertThat(registry.counter("continuum.kv.cache.index.engine.events", "kind", "cleared").count())
                        .isEqualTo(1);
            } finally {
                source.stop();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
