package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.GlobalPromptsConfig.MergeStrategy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code global_prompts}: resolution, files relative to {@code prompts_dir}, their bounds, strict mode and reload. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class GlobalPromptsConfigTest {
    private static final String BACKENDS = """
            backends:
              - {name: a, url: "http://127.0.0.1:8000"}
              - {name: b, url: "http://127.0.0.1:8001", requires_single_leading_system: true}
            """;

    @TempDir
    Path dir;
    ConfigStore store;

    @AfterEach
    void stop() {
        if (store != null) {
            store.stop().join();
        }
    }

    private LoadResult load(String yaml) throws IOException {
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), BACKENDS + yaml);
        return TestConfigs.loader(dir, Map.of()).build().load(conf.resolve("config.yaml"));
    }

    private void prompt(String name, String text) throws IOException {
        Path p = dir.resolve("conf/prompts").resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }

    @Test
    void modelBeatsBackendBeatsDefaultAndAFileBeatsTheInlineText() throws IOException {
        prompt("system.md", "from the default file");
        prompt("m1.md", "from m1's file");
        GlobalPromptsConfig g = load("""
                global_prompts:
                  prompts_dir: prompts
                  default: inline default
                  default_file: system.md
                  backends:
                    a: {prompt: for backend a}
                  models:
                    m1: {prompt: inline m1, prompt_file: m1.md}
                    m2: {prompt: ""}
                  merge_strategy: append
                  separator: "\\n---\\n"
                """).orThrow().globalPrompts();

        assertThat(g).isNotNull();
        assertThat(g.promptFor("m1", "a")).isEqualTo("from m1's file");
        assertThat(g.promptFor("other", "a")).isEqualTo("for backend a");
        assertThat(g.promptFor("other", "b")).isEqualTo("from the default file");
        assertThat(g.promptFor("m2", "a")).as("an empty model prompt opts the model out").isEmpty();
        assertThat(g.mergeStrategy()).isEqualTo(MergeStrategy.APPEND);
        assertThat(g.separator()).isEqualTo("\n---\n");
        assertThat(g.promptsDir()).isEqualTo(dir.resolve("conf/prompts"));
        assertThat(g.files()).containsExactly(dir.resolve("conf/prompts/system.md"), dir.resolve("conf/prompts/m1.md"));
    }

    @Test
    void defaultsArePrependAndABlankLineAndTheBackendFlagIsRead() throws IOException {
        RouterConfig c = load("global_prompts: {default: be brief}\n").orThrow();

        assertThat(c.globalPrompts().mergeStrategy()).isEqualTo(MergeStrategy.PREPEND);
        assertThat(c.globalPrompts().separator()).isEqualTo("\n\n");
        assertThat(c.globalPrompts().promptFor("any", "a")).isEqualTo("be brief");
        assertThat(c.backends()).extracting(BackendConfig::requiresSingleLeadingSystem).containsExactly(false, true);
        assertThat(load("").orThrow().globalPrompts()).as("absent section").isNull();
    }

    @Test
    void aMissingOversizedOrNonUtf8FileIsAnErrorNamingItsPath() throws IOException {
        Files.createDirectories(dir.resolve("conf/prompts"));
        Files.write(dir.resolve("conf/prompts/big.md"), new byte[GlobalPromptsBinder.MAX_PROMPT_BYTES + 1]);
        Files.write(dir.resolve("conf/prompts/latin1.md"), new byte[] {'c', 'a', 'f', (byte) 0xe9});

        LoadResult r = load("""
                global_prompts:
                  prompts_dir: prompts
                  default_file: nope.md
                  backends: {a: {prompt_file: big.md}}
                  models: {m: {prompt_file: latin1.md}}
                """);

        assertThat(r.ok()).isFalse();
        assertThat(TestConfigs.errorLines(r)).containsExactlyInAnyOrder(
                "global_prompts.default_file: \"nope.md\" (expected: a readable prompt file; not found)",
                "global_prompts.backends.a.prompt_file: \"big.md\" (expected: a prompt file of at most 1 MiB)",
                "global_prompts.models.m.prompt_file: \"latin1.md\" (expected: a UTF-8 prompt file)");
    }

    @Test
    void aPromptsDirThatIsNoDirectoryIsAnError() throws IOException {
        LoadResult r = load("global_prompts: {prompts_dir: missing, default: x}\n");

        assertThat(TestConfigs.errorLines(r))
                .containsExactly("global_prompts.prompts_dir: \"missing\" (expected: a directory; not found)");
    }

    @Test
    void aSectionWithoutAnyPromptIsRefusedInStrictMode() throws IOException {
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), BACKENDS + "global_prompts: {merge_strategy: replace}\n");
        LoadResult strict = TestConfigs.loader(dir, Map.of()).strict(true).build().load(conf.resolve("config.yaml"));
        LoadResult working = TestConfigs.loader(dir, Map.of()).strict(true).build()
                .loadString(BACKENDS + "global_prompts: {default: x, merge_strategy: replace}\n");

        assertThat(strict.ok()).isFalse();
        assertThat(strict.errors()).extracting(Problem::path).containsExactly("global_prompts");
        assertThat(working.ok()).as("a section that acts is fine in strict mode: %s", TestConfigs.lines(working))
                .isTrue();
    }

    @Test
    void aChangedPromptFileIsReloadedByTheWatcher() throws IOException {
        prompt("system.md", "first");
        Path file = Files.createDirectories(dir.resolve("conf")).resolve("config.yaml");
        Files.writeString(file, BACKENDS + "global_prompts: {prompts_dir: prompts, default_file: system.md}\n");
        store = ConfigStore.builder(TestConfigs.loader(dir, Map.of())
                        .overrides(ConfigOverrides.none().withConfigFile(file)).build())
                .meterRegistry(new SimpleMeterRegistry()).debounce(Duration.ofMillis(200)).build();
        store.start().join();
        assertThat(store.current().globalPrompts().promptFor("m", "a")).isEqualTo("first");

        prompt("system.md", "second");

        await().atMost(10, TimeUnit.SECONDS)
                .until(() -> "second".equals(store.current().globalPrompts().promptFor("m", "a")));
        assertThat(store.history().versions()).hasSizeGreaterThanOrEqualTo(2);
    }
}
