package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Render once on Qwen3's real template and tokenizer: the probes, the keys, the reuse and its bound. */
class PrefixRenderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private static String turn(String role, String content) {
        return "{\"role\":\"" + role + "\",\"content\":\"" + content + "\"}";
    }

    private static byte[] body(String... messages) {
        return ("{\"model\":\"m\",\"messages\":[" + String.join(",", messages) + "],\"temperature\":0.5}")
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void messageSpansAreTheMessagesBytesExactly() throws Exception {
        byte[] body = ("{\"messages\": [ {\"role\":\"user\",\"content\":\"a, b ] }\"} ,{\"role\":\"assistant\","
                + "\"content\":\"東京\"}], \"tools\" : [1], \"chat_template_kwargs\":{\"x\":true}}")
                .getBytes(StandardCharsets.UTF_8);
        ChatPrompt p = ChatPrompt.parse(ChatPrompt.mapper(PromptLimits.defaults()), body);
        long[] spans = p.spans().messages();
        assertThat(spans).hasSize(2);
        assertThat(slice(body, spans[0])).isEqualTo("{\"role\":\"user\",\"content\":\"a, b ] }\"}");
        assertThat(slice(body, spans[1])).isEqualTo("{\"role\":\"assistant\",\"content\":\"東京\"}");
        assertThat(slice(body, p.spans().tools())).isEqualTo("[1]");
        assertThat(slice(body, p.spans().kwargs())).isEqualTo("{\"x\":true}");
    }

    @Test
    void aDuplicateTopLevelFieldIsRefused() {
        byte[] body = "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"messages\":[]}"
                .getBytes(StandardCharsets.UTF_8);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ChatPrompt.parse(ChatPrompt.mapper(
                PromptLimits.defaults()), body)).isInstanceOf(ChatPrompt.Malformed.class);
    }

    private static String slice(byte[] body, long span) {
        return new String(body, ChatPrompt.from(span), ChatPrompt.to(span) - ChatPrompt.from(span),
                StandardCharsets.UTF_8);
    }

    @Test
    void qwen3IsContinuedAfterAUserOrToolMessageButNotAfterAnAssistantsReasoning() throws Exception {
        ChatTemplates templates = ChatTemplates.read(JSON, Optional.of(Qwen3Fixture.tokenizerConfig()),
                Optional.empty(), 1 << 20);
        HuggingFacePromptEncoder encoder = new HuggingFacePromptEncoder(PromptLimits.defaults(),
                new SimpleMeterRegistry(), System::nanoTime, tmp.resolve("djl"));
        String template = templates.select(false).orElseThrow();
        PrefixRender.Shape shape = PrefixRender.shape(JSON, encoder::render, template, templates, new byte[16],
                System.nanoTime() + 60_000_000_000L);
        // A prefix may end anywhere (its render is the whole render without the generation prompt) ...
        assertThat(shape.ends()).contains("system", "user", "assistant", "tool");
        // ... but is continued only where the stand-in renders the rest as the whole conversation does: not after
        // an assistant turn (Qwen3 drops the reasoning of turns before the last user query), nor between two tool
        // results (they share one user turn).
        assertThat(shape.joins()).contains("system>user", "user>assistant", "tool>assistant")
                .doesNotContain("assistant>user", "tool>tool");
    }

    /** The parsed template is shared: renders on several threads at once give what one thread alone gives. */
    @Test
    void aTemplateParsedOnceRendersTheSameOnManyThreadsAtOnce() throws Exception {
        ChatTemplates templates = ChatTemplates.read(JSON, Optional.of(Qwen3Fixture.tokenizerConfig()),
                Optional.empty(), 1 << 20);
        HuggingFacePromptEncoder encoder = new HuggingFacePromptEncoder(PromptLimits.defaults(),
                new SimpleMeterRegistry(), System::nanoTime, tmp.resolve("djl"));
        String template = templates.select(true).orElseThrow();
        java.util.List<ChatPrompt> prompts = new java.util.ArrayList<>();
        java.util.List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            byte[] b = ("{\"messages\":[" + turn("system", "S" + i) + "," + turn("user", "Q" + i) + ","
                    + turn("assistant", "<think>\\nr" + i + "\\n</think>\\n\\nA" + i) + "," + turn("user", "F" + i)
                    + "],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f" + i + "\"}}]}")
                    .getBytes(StandardCharsets.UTF_8);
            ChatPrompt p = ChatPrompt.parse(ChatPrompt.mapper(PromptLimits.defaults()), b);
            prompts.add(p);
            expected.add(encoder.render(template, templates, p, System.nanoTime() + 60_000_000_000L));
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            java.util.List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(pool.submit(() -> {
                    for (int round = 0; round < 25; round++) {
                        for (int i = 0; i < prompts.size(); i++) {
                            String got = encoder.render(template, templates, prompts.get(i),
                                    System.nanoTime() + 60_000_000_000L);
                            if (!got.equals(expected.get(i))) {
                                return false;
                            }
                        }
                    }
                    return true;
                }));
            }
            for (java.util.concurrent.Future<Boolean> r : results) {
                assertThat(r.get(120, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theSameMessagesGiveTheSameKeysWhateverElseTheBodyHolds() throws Exception {
        PrefixRender.Shape shape = new PrefixRender.Shape(new byte[16], java.util.Set.of("user"), java.util.Set.of());
        byte[] a = body(turn("user", "hi"), turn("assistant", "yo"));
        byte[] b = ("{\"stream\":true,\"messages\":[" + turn("user", "hi") + "," + turn("assistant", "no") + "]}")
                .getBytes(StandardCharsets.UTF_8);
        PromptLimits d = PromptLimits.defaults();
        long[] ka = PrefixRender.keys(shape, a, ChatPrompt.parse(ChatPrompt.mapper(d), a).spans());
        long[] kb = PrefixRender.keys(shape, b, ChatPrompt.parse(ChatPrompt.mapper(d), b).spans());
        assertThat(ka[2]).isEqualTo(kb[2]);
        assertThat(ka[3]).isEqualTo(kb[3]);
        assertThat(ka[4]).isNotEqualTo(kb[4]);
        byte[] c = ("{\"tools\":[],\"messages\":[" + turn("user", "hi") + "]}").getBytes(StandardCharsets.UTF_8);
        long[] kc = PrefixRender.keys(shape, c, ChatPrompt.parse(ChatPrompt.mapper(d), c).spans());
        assertThat(kc[2]).as("tools are part of the key").isNotEqualTo(ka[2]);
    }

    @Test
    void aSecondTurnReusesTheFirstAndGivesTheWholeRendersIds() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PromptLimits d = PromptLimits.defaults();
        HuggingFacePromptEncoder encoder = new HuggingFacePromptEncoder(d.withDeadline(Duration.ofSeconds(30)),
                registry, System::nanoTime, tmp.resolve("djl"));
        HuggingFacePromptEncoder whole = new HuggingFacePromptEncoder(d.withDeadline(Duration.ofSeconds(30)),
                new SimpleMeterRegistry(), System::nanoTime, tmp.resolve("djl2"));
        encoder.start().join();
        whole.start().join();
        whole.renderCacheBytes(0);
        whole.segmentCacheBytes(0);
        try {
            String sys = turn("system", "Be brief. 東京");
            byte[] first = body(sys, turn("user", "What is a radix tree?"));
            await().atMost(Duration.ofSeconds(60)).until(() -> encoder.encode(Qwen3Fixture.artifacts(), first)
                    .get(30, TimeUnit.SECONDS) instanceof PromptEncoding.Tokens);
            assertThat(registry.counter("continuum.dynamo.kv.template.probes", "result", "cut").count()).isOne();
            PromptEncoding.Tokens one = tokens(encoder, first);
            assertThat(one.prefix()).isNotNull();
            byte[] second = body(sys, turn("user", "What is a radix tree?"),
                    turn("assistant", "<think>\\nshort\\n</think>\\n\\nA compressed trie. 🚀"),
                    turn("user", "And a trie?"));
            PromptEncoding.Tokens two = tokens(encoder, second);
            assertThat(registry.counter("continuum.dynamo.kv.render.cache.lookups", "result", "hit").count())
                    .isPositive();
            assertThat(two.prefix()).isNotNull();
            assertThat(two.prefix().reused()).isNotNull();
            assertThat(two.prefix().reusedTokens()).isPositive();
            await().atMost(Duration.ofSeconds(60)).until(() -> whole.encode(Qwen3Fixture.artifacts(), second)
                    .get(30, TimeUnit.SECONDS) instanceof PromptEncoding.Tokens);
            assertThat(two.ids()).containsExactly(tokens(whole, second).ids());
            assertThat(java.util.Arrays.copyOf(two.ids(), two.prefix().reusedTokens()))
                    .containsExactly(java.util.Arrays.copyOf(one.ids(), two.prefix().reusedTokens()));
            assertThat(encoder.renderCacheHeldBytes()).isPositive();
            encoder.renderCacheBytes(0); // a reload turning render-once off
            assertThat(encoder.renderCacheHeldBytes()).isZero();
            assertThat(tokens(encoder, second).ids()).containsExactly(two.ids());
        } finally {
            encoder.stop().join();
            whole.stop().join();
        }
    }

    private static PromptEncoding.Tokens tokens(HuggingFacePromptEncoder e, byte[] body) throws Exception {
        return (PromptEncoding.Tokens) e.encode(Qwen3Fixture.artifacts(), body).get(30, TimeUnit.SECONDS);
    }
}
