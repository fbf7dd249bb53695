package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Templates and prompts written to hurt: each request ends with a fallback within its deadline, on the pool's
 * threads, and leaves every permit free for the next request. One encoder (deadline 3 s) serves all cases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileTemplateTest {
    /** Long enough that, on a loaded machine, the heap and text caps trip before it; short enough to wait for. */
    private static final Duration DEADLINE = Duration.ofSeconds(3);
    /** A smaller render heap than the default 64 MiB, so the hoarding template reaches it quickly. */
    private static final long RENDER_HEAP = 16L << 20;

    @TempDir
    static Path dir;

    private final PromptLimits limits = limits();

    private static PromptLimits limits() {
        PromptLimits d = PromptLimits.defaults();
        return new PromptLimits(d.renderPermits(), d.permitWait(), DEADLINE, d.renderBudget(), RENDER_HEAP,
                d.maxBodyBytes(), d.maxJsonDepth(), d.maxRenderedBytes(), d.maxTokens(), d.maxMacroDepth(),
                d.maxTokenizers(), d.concurrentLoads(), d.maxArtifactBytes(), d.loadRetry());
    }
    private HuggingFacePromptEncoder encoder;

    @BeforeAll
    void start() {
        encoder = new HuggingFacePromptEncoder(limits, new SimpleMeterRegistry(), System::nanoTime, dir.resolve("djl"));
        encoder.start().join();
    }

    @AfterAll
    void stop() {
        encoder.stop().join();
    }

    private PromptEncoding encodeLoaded(PromptArtifacts artifacts, byte[] body) throws Exception {
        await().atMost(Duration.ofSeconds(20)).until(() -> !(encoder.encode(artifacts, TinyModel.body("hello"))
                .get(5, TimeUnit.SECONDS) instanceof PromptEncoding.Fallback f
                && f.reason() == PromptEncoding.Reason.TOKENIZER_UNAVAILABLE));
        CompletableFuture<PromptEncoding> result = encoder.encode(artifacts, body);
        // a hostile render ends at its deadline; allow the scheduler on a loaded machine a margin beyond it
        return result.get(DEADLINE.toMillis() + 5_000, TimeUnit.MILLISECONDS);
    }

    private PromptEncoding.Reason fallbackOf(String key, String template) throws Exception {
        PromptEncoding e = encodeLoaded(TinyModel.withTemplate(dir, key, template), TinyModel.body("hello"));
        assertThat(e).isInstanceOf(PromptEncoding.Fallback.class);
        return ((PromptEncoding.Fallback) e).reason();
    }

    @Test
    void aPlainTemplateGivesTheTokenIdsOnAPoolThread() throws Exception {
        PromptArtifacts plain = TinyModel.withTemplate(dir, "plain", TinyModel.PLAIN);
        assertThat(encodeLoaded(plain, TinyModel.body("hello x"))).isInstanceOfSatisfying(PromptEncoding.Tokens.class,
                t -> assertThat(t.ids()).containsExactly(1, 3, 4, 2));
        AtomicReference<String> thread = new AtomicReference<>();
        // the render completes the future on its own thread, never on the caller's
        encoder.encode(plain, TinyModel.body("hello")).thenRun(() -> thread.set(Thread.currentThread().getName()))
                .get(5, TimeUnit.SECONDS);
        assertThat(thread.get()).satisfiesAnyOf(
                name -> assertThat(name).startsWith("kv-prompt-render-"),
                name -> assertThat(name).isEqualTo(Thread.currentThread().getName()));
    }

    @Test
    void anEndlessLoopEndsAtItsDeadlineOrBudget() throws Exception {
        assertThat(fallbackOf("loop", "{% for a in range(100000) %}{% for b in range(100000) %}"
                + "{% for c in range(100000) %}{% endfor %}{% endfor %}{% endfor %}"))
                .isEqualTo(PromptEncoding.Reason.RENDER_UNAVAILABLE);
        permitsAllFree();
    }

    private static final String GROWTH =
            "{% set s = 'ab' %}{% for i in range(64) %}{% set s = s ~ s %}{% endfor %}{{ s }}";

    @Test
    void exponentialStringGrowthStopsAtTheTextCap() throws Exception {
        // which bound stops it with the default render heap: the 1 Mi-character cap on every string built
        RenderBudget budget = new RenderBudget(limits.renderBudget(), PromptLimits.defaults().renderHeapBytes(),
                System.nanoTime() + Duration.ofMinutes(1).toNanos(), System::nanoTime);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> new TemplateEngine(limits).render(GROWTH, new java.util.HashMap<>(), budget))
                .isInstanceOf(TemplateFailure.TooLarge.class);
        // through the encoder, with this class's smaller render heap either cap may trip first
        assertThat(fallbackOf("growth", GROWTH))
                .isIn(PromptEncoding.Reason.PROMPT_TOO_LARGE, PromptEncoding.Reason.RENDER_UNAVAILABLE);
        permitsAllFree();
    }

    private static final String HOARD = "{% set ns = namespace(l=[]) %}{% set big = 'y' %}"
            + "{% for i in range(19) %}{% set big = big ~ big %}{% endfor %}"
            + "{% for i in range(100000) %}{% set ns.l = ns.l + [big ~ i] %}{% endfor %}{{ ns.l|length }}";

    @Test
    void keepingManyLargeStringsStopsAtTheRenderHeapBudget() throws Exception {
        // which bound stops it: rendered here, on this thread, with only the heap budget able to trip in time
        RenderBudget budget = new RenderBudget(limits.renderBudget(), RENDER_HEAP,
                System.nanoTime() + Duration.ofMinutes(1).toNanos(), System::nanoTime);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> new TemplateEngine(limits).render(HOARD, new java.util.HashMap<>(), budget))
                .isInstanceOf(TemplateFailure.class).hasMessageContaining("allocated more than");
        // and through the encoder: a fallback, the permits back
        assertThat(fallbackOf("hoard", HOARD)).isEqualTo(PromptEncoding.Reason.RENDER_UNAVAILABLE);
        permitsAllFree();
    }

    @Test
    void deepRecursionFails() throws Exception {
        assertThat(fallbackOf("recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"))
                .isEqualTo(PromptEncoding.Reason.RENDER_UNAVAILABLE);
        permitsAllFree();
    }

    @Test
    void raiseExceptionAndFileLoadingFail() throws Exception {
        assertThat(fallbackOf("raise", "{{ raise_exception('no system role') }}"))
                .isEqualTo(PromptEncoding.Reason.RENDER_UNAVAILABLE);
        assertThat(fallbackOf("include", "{% include '/etc/passwd' %}"))
                .isEqualTo(PromptEncoding.Reason.RENDER_UNAVAILABLE);
    }

    @Test
    void aHundredMegabytePromptIsRefusedBeforeParsingAndAnOversizedRenderAfterRendering() throws Exception {
        PromptArtifacts plain = TinyModel.withTemplate(dir, "plain", TinyModel.PLAIN);
        encodeLoaded(plain, TinyModel.body("hello"));
        byte[] huge = TinyModel.body("x".repeat(100 << 20));
        CompletableFuture<PromptEncoding> refused = encoder.encode(plain, huge);
        assertThat(refused).isCompletedWithValue(Fallbacks.PROMPT_TOO_LARGE);
        String twoMiB = "hello ".repeat((2 << 20) / 6);
        assertThat(encodeLoaded(plain, TinyModel.body(twoMiB))).isEqualTo(Fallbacks.PROMPT_TOO_LARGE);
        permitsAllFree();
    }

    @Test
    void aBodyThatIsNotAChatRequestFallsBack() throws Exception {
        PromptArtifacts plain = TinyModel.withTemplate(dir, "plain", TinyModel.PLAIN);
        assertThat(encodeLoaded(plain, "[1,2".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
        assertThat(encodeLoaded(plain, ("{\"messages\":" + "[".repeat(500) + "]".repeat(500) + "}")
                .getBytes(StandardCharsets.UTF_8))).isEqualTo(Fallbacks.RENDER_UNAVAILABLE);
    }

    private void permitsAllFree() {
        // the interrupted render thread returns its permit (at the latest when the deadline fires)
        await().atMost(Duration.ofSeconds(10)).until(() -> encoderPool().availablePermits() == limits.renderPermits());
    }

    private RenderPool encoderPool() {
        return encoder.renderPool();
    }
}
