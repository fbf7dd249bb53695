package dev.continuum.router.proxy.prompts;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.core.config.GlobalPromptsConfig.MergeStrategy;
import dev.continuum.router.core.config.GlobalPromptsConfig.PromptSource;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The body rewrite itself: each strategy on each shape of system message, and the single-leading-system merge. */
class ChatRewriteTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ChatRewrite rewrite(MergeStrategy s, boolean single) {
        return new ChatRewrite("G", s, " | ", single);
    }

    private static JsonNode messages(ChatRewrite r, String messagesJson) throws IOException {
        byte[] out = r.apply(("{\"model\":\"m\",\"messages\":" + messagesJson + ",\"temperature\":0.70}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(out).as("changed").isNotNull();
        return JSON.readTree(out).get("messages");
    }

    private static String json(JsonNode n) {
        return n.toString();
    }

    @Test
    void prependAndAppendJoinTheFirstSystemMessageWithTheSeparator() throws IOException {
        String msgs = "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"own\"},"
                + "{\"role\":\"system\",\"content\":\"second\"}]";

        assertThat(json(messages(rewrite(MergeStrategy.PREPEND, false), msgs))).isEqualTo(
                "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"G | own\"},"
                        + "{\"role\":\"system\",\"content\":\"second\"}]");
        assertThat(json(messages(rewrite(MergeStrategy.APPEND, false), msgs))).isEqualTo(
                "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"own | G\"},"
                        + "{\"role\":\"system\",\"content\":\"second\"}]");
    }

    @Test
    void withoutASystemMessageThePromptLeadsAsOne() throws IOException {
        for (MergeStrategy s : MergeStrategy.values()) {
            assertThat(json(messages(rewrite(s, false), "[{\"role\":\"user\",\"content\":\"hi\"}]"))).isEqualTo(
                    "[{\"role\":\"system\",\"content\":\"G\"},{\"role\":\"user\",\"content\":\"hi\"}]");
        }
    }

    @Test
    void replaceDropsEverySystemMessage() throws IOException {
        assertThat(json(messages(rewrite(MergeStrategy.REPLACE, false), "[{\"role\":\"system\",\"content\":\"a\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"b\"}]"))).isEqualTo(
                "[{\"role\":\"system\",\"content\":\"G\"},{\"role\":\"user\",\"content\":\"hi\"}]");
    }

    @Test
    void partListsGetThePromptInTheirEdgeTextPartOrAsANewPart() throws IOException {
        String text = "[{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"own\"},"
                + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"u\"}}]}]";

        assertThat(json(messages(rewrite(MergeStrategy.PREPEND, false), text).get(0).get("content"))).isEqualTo(
                "[{\"type\":\"text\",\"text\":\"G | own\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"u\"}}]");
        assertThat(json(messages(rewrite(MergeStrategy.APPEND, false), text).get(0).get("content"))).isEqualTo(
                "[{\"type\":\"text\",\"text\":\"own\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"u\"}},"
                        + "{\"type\":\"text\",\"text\":\"G\"}]");
    }

    @Test
    void singleLeadingSystemMergesEverySystemTextInOrder() throws IOException {
        JsonNode out = messages(new ChatRewrite(null, MergeStrategy.PREPEND, "", true),
                "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"one\"},"
                        + "{\"role\":\"assistant\",\"content\":\"ok\"},"
                        + "{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"two\"},"
                        + "{\"type\":\"text\",\"text\":\"three\"}]}]");

        assertThat(json(out)).isEqualTo("[{\"role\":\"system\",\"content\":\"one\\n\\ntwo\\nthree\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"ok\"}]");
    }

    @Test
    void theGlobalPromptIsMergedBeforeTheSystemMessagesAre() throws IOException {
        JsonNode out = messages(rewrite(MergeStrategy.APPEND, true), "[{\"role\":\"user\",\"content\":\"hi\"},"
                + "{\"role\":\"system\",\"content\":\"one\"},{\"role\":\"system\",\"content\":\"two\"}]");

        assertThat(json(out)).isEqualTo("[{\"role\":\"system\",\"content\":\"one | G\\n\\ntwo\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"}]");
    }

    @Test
    void aBodyThatNeedsNothingIsLeftAsItIs() throws IOException {
        ChatRewrite single = new ChatRewrite(null, MergeStrategy.PREPEND, "", true);
        byte[] leading = "{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"u\"}]}"
                .getBytes(StandardCharsets.UTF_8);

        assertThat(single.apply(leading)).isNull();
        assertThat(rewrite(MergeStrategy.PREPEND, false).apply("{\"prompt\":\"x\"}".getBytes(StandardCharsets.UTF_8)))
                .as("no messages array").isNull();
        assertThat(ChatRewrite.NONE.apply(leading)).isNull();
        assertThat(new ChatRewrite("", MergeStrategy.REPLACE, "", false).none()).as("empty prompt").isTrue();
    }

    @Test
    void numbersAndOtherFieldsKeepTheirExactForm() throws IOException {
        byte[] out = rewrite(MergeStrategy.PREPEND, false).apply(("{\"messages\":[],\"temperature\":0.70,"
                + "\"seed\":123456789012345678901234567890,\"logit_bias\":{\"5\":1e400}}").getBytes(StandardCharsets.UTF_8));

        assertThat(new String(out, StandardCharsets.UTF_8)).isEqualTo("{\"messages\":[{\"role\":\"system\","
                + "\"content\":\"G\"}],\"temperature\":0.70,\"seed\":123456789012345678901234567890,"
                + "\"logit_bias\":{\"5\":1E+400}}");
    }

    @Test
    void ofResolvesThePromptOfTheModelAndBackendAndTheBackendsFlag() {
        GlobalPromptsConfig g = new GlobalPromptsConfig(null, null, null,
                Map.of("b", new PromptSource("for b", null, "for b")),
                Map.of("m", new PromptSource("for m", null, "for m")), MergeStrategy.APPEND, "\n", "default");
        BackendConfig a = backend("a", false);
        BackendConfig b = backend("b", true);

        assertThat(ChatRewrite.of(g, "m", b)).isEqualTo(new ChatRewrite("for m", MergeStrategy.APPEND, "\n", true));
        assertThat(ChatRewrite.of(g, "x", b)).isEqualTo(new ChatRewrite("for b", MergeStrategy.APPEND, "\n", true));
        assertThat(ChatRewrite.of(g, "x", a)).isEqualTo(new ChatRewrite("default", MergeStrategy.APPEND, "\n", false));
        assertThat(ChatRewrite.of(null, "x", a)).isSameAs(ChatRewrite.NONE);
        assertThat(ChatRewrite.of(null, "x", b).singleLeadingSystem()).isTrue();
    }

    private static BackendConfig backend(String name, boolean single) {
        return new BackendConfig(name, BackendType.OPENAI, URI.create("http://127.0.0.1:1"), List.of(),
                BackendRole.UNIFIED, 1, null, null, true, false, null, single);
    }
}
