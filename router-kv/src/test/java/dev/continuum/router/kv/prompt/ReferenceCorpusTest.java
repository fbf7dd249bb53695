package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import dev.continuum.router.kv.hash.Sightings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router's prompt pipeline against an independent reference, on every conversation of the corpus
 * ({@code prompt/corpus.jsonl}) with Qwen3's real tokenizer and chat template: the rendered text must equal
 * what {@code @huggingface/jinja} renders and what Jinja2 set up as transformers sets it up renders, and the
 * token IDs what {@code @lenml/tokenizers} encodes. node and python run once each for the whole corpus.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReferenceCorpusTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;

    private final Map<String, JsonNode> bodies = new LinkedHashMap<>();
    private final Map<String, JsonNode> node = new LinkedHashMap<>();
    private final Map<String, JsonNode> jinja2 = new LinkedHashMap<>();
    private HuggingFacePromptEncoder encoder;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private ChatTemplates templates;
    private DjlTokenizer djl;
    private AddedTokens added;
    private SegmentedTokenizer cached;

    @BeforeAll
    void runReferences() throws Exception {
        ArrayNode cases = JSON.createArrayNode();
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/prompt/corpus.jsonl"))) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    JsonNode c = JSON.readTree(line);
                    bodies.put(c.get("name").asText(), c.get("body"));
                    cases.add(c);
                }
            }
        }
        ObjectNode request = JSON.createObjectNode();
        request.put("tokenizer", Qwen3Fixture.tokenizerJson().toString());
        request.put("config", Qwen3Fixture.tokenizerConfig().toString());
        request.set("cases", cases);
        Path requestFile = tmp.resolve("request.json");
        JSON.writeValue(requestFile.toFile(), request);
        index(node, run(requestFile, "node", script("reference.cjs"), Qwen3Fixture.modules().toString()));
        index(jinja2, run(requestFile, "/usr/bin/python3", script("reference_jinja2.py")));

        // Correctness, not bounds: generous waits so that a loaded test machine cannot turn a case into a fallback.
        PromptLimits d = PromptLimits.defaults();
        PromptLimits patient = new PromptLimits(d.renderPermits(), Duration.ofSeconds(10), Duration.ofSeconds(30),
                d.renderBudget(), d.renderHeapBytes(), d.maxBodyBytes(), d.maxJsonDepth(), d.maxRenderedBytes(),
                d.maxTokens(), d.maxMacroDepth(), d.maxTokenizers(), d.concurrentLoads(), d.maxArtifactBytes(),
                d.loadRetry());
        encoder = new HuggingFacePromptEncoder(patient, registry, System::nanoTime, tmp.resolve("djl"));
        encoder.start().join();
        templates = ChatTemplates.read(JSON, Qwen3Fixture.artifacts().tokenizerConfig(), java.util.Optional.empty(),
                1 << 20);
        byte[] tokenizerJson = Files.readAllBytes(Qwen3Fixture.tokenizerJson());
        djl = DjlTokenizer.load(tokenizerJson);
        added = AddedTokens.read(JSON, tokenizerJson);
        assertThat(SegmentedTokenizer.verify(djl, added)).as("the premise on Qwen3's probes").isNull();
        cached = new SegmentedTokenizer(djl, added, SegmentedTokenizer.identityOf(tokenizerJson),
                new SegmentCache(64L << 20, SegmentCache.Listener.NONE), new Sightings(1 << 16),
                SegmentedTokenizer.Stats.NONE, true, true);
        assertThat(SegmentedTokenizer.verifyChunks(djl)).as("the chunk premise on Qwen3's probes").isNull();
        byte[] first = JSON.writeValueAsBytes(bodies.values().iterator().next());
        // The first request only starts the load; requests get token IDs once it is done.
        await().atMost(Duration.ofSeconds(30)).until(() -> encoder.encode(Qwen3Fixture.artifacts(), first)
                .get(5, TimeUnit.SECONDS) instanceof PromptEncoding.Tokens);
    }

    @AfterAll
    void stop() {
        if (encoder != null) {
            encoder.stop().join();
        }
        if (djl != null) {
            djl.close();
        }
    }

    @Test
    void theCorpusCoversAtLeastFiftyConversationsAndBothReferencesAnswerEveryOne() {
        assertThat(bodies).hasSizeGreaterThanOrEqualTo(50);
        assertThat(node.keySet()).containsExactlyElementsOf(bodies.keySet());
        assertThat(jinja2.keySet()).containsExactlyElementsOf(bodies.keySet());
        List<String> errors = new ArrayList<>();
        node.forEach((name, a) -> {
            if (a.has("error")) {
                errors.add("node " + name + ": " + a.get("error").asText());
            }
        });
        jinja2.forEach((name, a) -> {
            if (a.has("error")) {
                errors.add("jinja2 " + name + ": " + a.get("error").asText());
            }
        });
        assertThat(errors).isEmpty();
    }

    @TestFactory
    Stream<DynamicTest> renderedTextAndTokenIdsEqualTheReference() {
        return bodies.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(), () -> {
            String name = e.getKey();
            byte[] body = JSON.writeValueAsBytes(e.getValue());
            ChatPrompt prompt = ChatPrompt.parse(ChatPrompt.mapper(PromptLimits.defaults()), body);
            String template = templates.select(prompt.tools() != null).orElseThrow();
            String ours = encoder.render(template, templates, prompt, System.nanoTime() + 5_000_000_000L);
            assertThat(ours).as("text vs @huggingface/jinja: " + name).isEqualTo(node.get(name).get("text").asText());
            assertThat(ours).as("text vs Jinja2: " + name).isEqualTo(jinja2.get(name).get("text").asText());

            PromptEncoding encoding = encoder.encode(Qwen3Fixture.artifacts(), body).get(60, TimeUnit.SECONDS);
            assertThat(encoding).isInstanceOf(PromptEncoding.Tokens.class);
            int[] expected = JSON.convertValue(node.get(name).get("ids"), int[].class);
            assertThat(((PromptEncoding.Tokens) encoding).ids()).as("token IDs: " + name).containsExactly(expected);
        }));
    }

    /**
     * The segment cache's premises on the whole corpus: the reference text encoded whole, segment by segment, cut
     * at every space between two letters (the chunk cuts), and through the cache (cold: noted; again: its pieces
     * admitted; warm: served from the cache) gives exactly the IDs of the independent JavaScript tokenizer, case by
     * case.
     */
    @TestFactory
    Stream<DynamicTest> wholeSegmentedAndCachedEncodesEqualTheJavaScriptTokenizer() {
        return bodies.keySet().stream().map(name -> DynamicTest.dynamicTest(name, () -> {
            String text = node.get(name).get("text").asText();
            int[] expected = JSON.convertValue(node.get(name).get("ids"), int[].class);
            assertThat(djl.encode(text, Integer.MAX_VALUE)).as("whole: " + name).containsExactly(expected);
            assertThat(SegmentedTokenizer.segmentedUncached(djl, added, text)).as("segmented: " + name)
                    .containsExactly(expected);
            assertThat(SegmentedTokenizer.chunkedUncached(djl, text)).as("cut at every space between letters: " + name)
                    .containsExactly(expected);
            assertThat(cached.encode(text, Integer.MAX_VALUE)).as("cached, first: " + name).containsExactly(expected);
            assertThat(cached.encode(text, Integer.MAX_VALUE)).as("cached, admitted: " + name)
                    .containsExactly(expected);
            assertThat(cached.encode(text, Integer.MAX_VALUE)).as("cached, warm: " + name).containsExactly(expected);
        }));
    }

    /**
     * Render once on the whole corpus: each case is sent after one of its earlier turns (cut before its last
     * message, before its last two, and in the middle), so that the encoder may reuse the earlier turn's render and
     * tokens; the IDs must still be the JavaScript tokenizer's, byte for byte what a whole render gives. Across the
     * corpus some turns must have been reused (the render cache's hits).
     */
    @TestFactory
    Stream<DynamicTest> laterTurnsReusingEarlierRendersEqualTheJavaScriptTokenizer() {
        return bodies.keySet().stream().map(name -> DynamicTest.dynamicTest(name, () -> {
            JsonNode body = bodies.get(name);
            int n = body.get("messages").size();
            int[] expected = JSON.convertValue(node.get(name).get("ids"), int[].class);
            for (int k : new int[] {n - 1, n - 2, n / 2}) {
                if (k < 1 || k >= n) {
                    continue;
                }
                ObjectNode earlier = body.deepCopy();
                ArrayNode messages = earlier.putArray("messages");
                for (int i = 0; i < k; i++) {
                    messages.add(body.get("messages").get(i));
                }
                // Twice: the render cache admits a conversation the second time it sees it.
                encoder.encode(Qwen3Fixture.artifacts(), JSON.writeValueAsBytes(earlier)).get(60, TimeUnit.SECONDS);
                encoder.encode(Qwen3Fixture.artifacts(), JSON.writeValueAsBytes(earlier)).get(60, TimeUnit.SECONDS);
                PromptEncoding later = encoder.encode(Qwen3Fixture.artifacts(), JSON.writeValueAsBytes(body))
                        .get(60, TimeUnit.SECONDS);
                assertThat(later).isInstanceOf(PromptEncoding.Tokens.class);
                assertThat(((PromptEncoding.Tokens) later).ids()).as("token IDs after turn " + k + ": " + name)
                        .containsExactly(expected);
            }
        }));
    }

    @AfterAll
    void someLaterTurnsReusedTheirEarlierRenders() {
        assertThat(registry.counter("continuum.dynamo.kv.render.cache.lookups", "result", "hit").count())
                .as("render cache hits over the corpus").isGreaterThan(20);
    }

    private static void index(Map<String, JsonNode> into, JsonNode answers) {
        for (JsonNode a : answers) {
            into.put(a.get("name").asText(), a);
        }
    }

    private String script(String name) throws IOException {
        Path file = tmp.resolve(name);
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/prompt/" + name))) {
            Files.write(file, in.readAllBytes());
        }
        return file.toString();
    }

    private JsonNode run(Path stdin, String... command) throws Exception {
        Path out = tmp.resolve("out-" + System.nanoTime() + ".json");
        Path err = tmp.resolve("err-" + System.nanoTime() + ".txt");
        Process p = new ProcessBuilder(command).redirectInput(stdin.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish");
        }
        assertThat(p.exitValue()).as(String.join(" ", command) + ": " + Files.readString(err)).isZero();
        return JSON.readTree(out.toFile());
    }

}
