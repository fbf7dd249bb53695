package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tokenizer cache's bookkeeping: loads off the caller's thread, retry after the failure delay on an injected
 * clock, eviction by count and by bytes, tokenizers closed only when their last user is done. The loader here is
 * a stand-in that counts calls and hands out closable fakes (what a DJL tokenizer does is covered by the corpus
 * and hostile-template tests, which load real ones).
 */
class ModelCacheTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final Map<String, AtomicInteger> loadsByKey = new ConcurrentHashMap<>();
    private final List<String> closed = new CopyOnWriteArrayList<>();
    private final List<String> outcomes = new CopyOnWriteArrayList<>();
    private volatile boolean failing;
    private volatile long bytesPerModel = 10;
    private ModelCache cache;

    private ModelCache start(int maxTokenizers, long maxBytes) {
        PromptLimits d = PromptLimits.defaults();
        PromptLimits limits = new PromptLimits(d.renderPermits(), d.permitWait(), d.deadline(), d.renderBudget(),
                d.renderHeapBytes(), d.maxBodyBytes(), d.maxJsonDepth(), d.maxRenderedBytes(), d.maxTokens(),
                d.maxMacroDepth(), maxTokenizers, 2, maxBytes, Duration.ofMinutes(5));
        cache = new ModelCache(limits, (artifacts, nowNanos) -> {
            loadsByKey.computeIfAbsent(artifacts.key(), k -> new AtomicInteger()).incrementAndGet();
            if (failing) {
                throw new java.io.IOException("corrupt tokenizer.json");
            }
            String key = artifacts.key();
            return new LoadedModel(key, new FakeTokenizer(key), new ChatTemplates(Map.of("default", "x"), Map.of()),
                    bytesPerModel, nowNanos);
        }, now::get, outcomes::add);
        cache.start().join();
        return cache;
    }

    @AfterEach
    void stop() {
        if (cache != null) {
            cache.stop().join();
        }
    }

    private static PromptArtifacts artifacts(String key) {
        return new PromptArtifacts(key, Path.of("unused"), Optional.empty(), Optional.empty());
    }

    private LoadedModel loaded(String key) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            LoadedModel m = cache.acquire(artifacts(key));
            if (m != null) {
                m.release();
            }
            return m != null;
        });
        LoadedModel m = cache.acquire(artifacts(key));
        assertThat(m).isNotNull();
        return m;
    }

    @Test
    void theFirstRequestStartsTheLoadAndGetsNothingAtOnce() {
        start(16, 1 << 20);
        assertThat(cache.acquire(artifacts("a"))).isNull();
        LoadedModel m = loaded("a");
        m.release();
        assertThat(loadsByKey.get("a")).hasValue(1);
        assertThat(outcomes).containsExactly("loaded");
    }

    @Test
    void aFailedLoadIsRetriedOnlyAfterTheRetryDelay() {
        start(16, 1 << 20);
        failing = true;
        assertThat(cache.acquire(artifacts("a"))).isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.contains("failed"));
        assertThat(cache.acquire(artifacts("a"))).isNull();
        now.addAndGet(Duration.ofMinutes(5).toNanos() - 1);
        assertThat(cache.acquire(artifacts("a"))).isNull();
        assertThat(loadsByKey.get("a")).hasValue(1);

        failing = false;
        now.addAndGet(1);
        loaded("a").release();
        assertThat(loadsByKey.get("a")).hasValue(2);
    }

    @Test
    void theLeastRecentlyUsedGoesWhenTheCountOrTheBytesAreFull() {
        start(2, 25);
        loaded("a").release();
        now.addAndGet(10);
        loaded("b").release();
        now.addAndGet(10);
        loaded("a").release(); // a is now more recent than b
        now.addAndGet(10);
        loaded("c").release();
        assertThat(closed).containsExactly("b");
        assertThat(cache.loadedCount()).isEqualTo(2);
        assertThat(cache.loadedBytes()).isEqualTo(20);

        bytesPerModel = 20; // d alone fills 20 of 25 bytes: both a and c must go
        loaded("d").release();
        assertThat(closed).containsExactly("b", "a", "c");
        assertThat(cache.loadedBytes()).isEqualTo(20);
    }

    @Test
    void aDroppedTokenizerClosesOnlyAfterItsLastRequestReleasesIt() {
        start(16, 1 << 20);
        LoadedModel inFlight = loaded("a");
        cache.retain(key -> false);
        assertThat(closed).isEmpty();
        assertThat(cache.acquire(artifacts("a"))).isNull(); // dropped: a new load starts
        inFlight.release();
        assertThat(closed).containsExactly("a");
    }

    @Test
    void stoppingClosesEveryTokenizer() {
        start(16, 1 << 20);
        loaded("a").release();
        loaded("b").release();
        cache.stop().join();
        assertThat(closed).containsExactlyInAnyOrder("a", "b");
    }

    private final class FakeTokenizer implements PromptTokenizer {
        private final String key;

        FakeTokenizer(String key) {
            this.key = key;
        }

        @Override
        public int[] encode(String text, int maxTokens) {
            return new int[0];
        }

        @Override
        public void close() {
            closed.add(key);
        }
    }
}
