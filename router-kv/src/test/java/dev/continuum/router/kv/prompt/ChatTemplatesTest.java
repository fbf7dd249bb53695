package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which template and which special-token variables a model's artifacts give, as transformers reads them. */
class ChatTemplatesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void namedTemplatesPickToolUseOnlyWhenToolsAreGiven() throws Exception {
        Path config = file("tokenizer_config.json", "{\"chat_template\":[{\"name\":\"default\",\"template\":\"D\"},"
                + "{\"name\":\"tool_use\",\"template\":\"T\"}],\"bos_token\":{\"__type\":\"AddedToken\","
                + "\"content\":\"<s>\",\"lstrip\":false},\"eos_token\":\"</s>\",\"unk_token\":null,"
                + "\"additional_special_tokens\":[\"<a>\",{\"content\":\"<b>\"}]}");
        ChatTemplates t = ChatTemplates.read(JSON, Optional.of(config), Optional.empty(), 1 << 20);
        assertThat(t.select(false)).contains("D");
        assertThat(t.select(true)).contains("T");
        assertThat(t.specialTokens()).containsEntry("bos_token", "<s>").containsEntry("eos_token", "</s>")
                .doesNotContainKey("unk_token").containsEntry("additional_special_tokens", List.of("<a>", "<b>"));
    }

    @Test
    void aChatTemplateFileWinsOverTheConfigInJinjaOrJsonForm() throws Exception {
        Path config = file("tokenizer_config.json", "{\"chat_template\":\"from config\",\"eos_token\":\"E\"}");
        Path jinja = file("chat_template.jinja", "{%- if true %}from file{% endif %}\n");
        assertThat(ChatTemplates.read(JSON, Optional.of(config), Optional.of(jinja), 1 << 20).select(false))
                .contains("{%- if true %}from file{% endif %}\n");
        Path json = file("chat_template.json", "{\"chat_template\": \"from json\"}");
        ChatTemplates t = ChatTemplates.read(JSON, Optional.of(config), Optional.of(json), 1 << 20);
        assertThat(t.select(true)).contains("from json");
        assertThat(t.specialTokens()).containsEntry("eos_token", "E");
    }

    @Test
    void artifactsWithoutATemplateOrOverTheSizeBoundAreRefused() throws Exception {
        Path config = file("tokenizer_config.json", "{\"eos_token\":\"E\"}");
        assertThatThrownBy(() -> ChatTemplates.read(JSON, Optional.of(config), Optional.empty(), 1 << 20))
                .isInstanceOf(ChatTemplates.Invalid.class);
        Path big = file("big.jinja", "x".repeat(2048));
        assertThatThrownBy(() -> ChatTemplates.read(JSON, Optional.empty(), Optional.of(big), 1024))
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("at most 1024");
        Path named = file("named.json", "{\"chat_template\":[{\"name\":\"tool_use\",\"template\":\"T\"}]}");
        assertThat(ChatTemplates.read(JSON, Optional.of(named), Optional.empty(), 1 << 20).select(false)).isEmpty();
    }
}
