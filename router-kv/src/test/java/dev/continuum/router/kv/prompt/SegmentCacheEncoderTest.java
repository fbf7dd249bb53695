package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The segment cache inside the real encoder (Qwen3, pool, DJL): metrics, the same IDs, the bound on reload. */
class SegmentCacheEncoderTest {
    @TempDir
    Path tmp;

    private static byte[] body(String last) {
        return ("{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief. 東京\"},"
                + "{\"role\":\"user\",\"content\":\"What is a radix tree?\"},"
                + "{\"role\":\"assistant\",\"content\":\"A compressed trie.\"},"
                + "{\"role\":\"user\",\"content\":\"" + last + "\"}]}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aSecondTurnIsServedMostlyFromTheCacheWithTheSameIds() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PromptLimits d = PromptLimits.defaults();
        HuggingFacePromptEncoder encoder = new HuggingFacePromptEncoder(d.withDeadline(Duration.ofSeconds(30)),
                registry, System::nanoTime, tmp.resolve("djl"));
        encoder.start().join();
        try {
            byte[] first = body("And a trie?");
            await().atMost(Duration.ofSeconds(60)).until(() -> encoder.encode(Qwen3Fixture.artifacts(), first)
                    .get(30, TimeUnit.SECONDS) instanceof PromptEncoding.Tokens);
            assertThat(registry.counter("continuum.dynamo.kv.tokenizer.segmented", "result", "segmented").count())
                    .isEqualTo(1);
            // The first turn seen a second time (a retry): its segments are admitted to the cache.
            assertThat(encoder.encode(Qwen3Fixture.artifacts(), first).get(30, TimeUnit.SECONDS))
                    .isInstanceOf(PromptEncoding.Tokens.class);
            byte[] second = body("How deep can it get?");
            int[] cached = ((PromptEncoding.Tokens) encoder.encode(Qwen3Fixture.artifacts(), second)
                    .get(30, TimeUnit.SECONDS)).ids();
            assertThat(registry.counter("continuum.dynamo.kv.segment.cache.lookups", "result", "hit").count())
                    .isPositive();
            assertThat(registry.counter("continuum.dynamo.kv.prompt.tokens", "source", "cache").count())
                    .isPositive();
            assertThat(registry.get("continuum.dynamo.kv.prompt.render").timer().count()).isPositive();
            assertThat(registry.get("continuum.dynamo.kv.prompt.tokenize").timer().count()).isPositive();
            assertThat(encoder.segmentCacheHeldBytes()).isPositive();

            encoder.segmentCacheBytes(0); // a reload turning the cache off
            assertThat(encoder.segmentCacheHeldBytes()).isZero();
            assertThat(registry.get("continuum.dynamo.kv.segment.cache.bytes").gauge().value()).isZero();
            int[] whole = ((PromptEncoding.Tokens) encoder.encode(Qwen3Fixture.artifacts(), second)
                    .get(30, TimeUnit.SECONDS)).ids();
            assertThat(cached).containsExactly(whole);
        } finally {
            encoder.stop().join();
        }
    }
}
