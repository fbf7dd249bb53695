package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.internal.YamlTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A document nested deeper than {@link YamlTrees#MAX_DEPTH} is a validation error naming the path and line of
 * the collection that is too deep, in every way a document reaches the reader (a string, the config file on a
 * reload, an {@code api_keys_file}), and never a {@link StackOverflowError}: 10,000 levels of block lists, flow
 * lists and maps. Aliases that expand past the bound are refused too; a document at the bound loads.
 */
class DeepYamlTest {
    private static final int LEVELS = 10_000;

    @TempDir
    Path dir;

    /** {@code key: - - - ... x}, {@code levels} lists in block style (each dash opens one) under {@code key}. */
    static String blockLists(String key, int levels) {
        return key + ":\n  " + "- ".repeat(levels) + "x\n";
    }

    static String flowLists(String key, int levels) {
        return key + ": " + "[".repeat(levels) + "]".repeat(levels) + "\n";
    }

    static String flowMaps(String key, int levels) {
        return key + ": " + "{a: ".repeat(levels) + "1" + "}".repeat(levels) + "\n";
    }

    @Test
    void tenThousandLevelsAreAnErrorWithThePathAndLineInEveryStyle() {
        // Line 1 is the backend, line 2 the key; block lists start on the line after it.
        Map<String, String> lines = Map.of(blockLists("x_extra", LEVELS), "3", flowLists("x_extra", LEVELS), "2",
                flowMaps("x_extra", LEVELS), "2");
        for (Map.Entry<String, String> doc : lines.entrySet()) {
            LoadResult result = TestConfigs.load(TestConfigs.ONE_BACKEND + doc.getKey());
            assertThat(result.ok()).isFalse();
            assertThat(result.errors()).singleElement().satisfies(p -> {
                assertThat(p.path()).startsWith("x_extra");
                assertThat(p.message()).startsWith("nested deeper than 128 levels at <config>:" + doc.getValue() + ":")
                        .endsWith("(expected: at most 128 maps and lists inside one another)");
            });
        }
    }

    @Test
    void thePathNamesTheCollectionThatIsTooDeep() {
        // The root map is level 1, x_extra's list level 2, so the 128th dash opens level 129.
        LoadResult lists = TestConfigs.load(blockLists("x_extra", 200));
        assertThat(lists.errors()).singleElement().satisfies(p ->
                assertThat(p.path()).isEqualTo("x_extra" + "[0]".repeat(127)));
        LoadResult maps = TestConfigs.load(flowMaps("x_extra", 200));
        assertThat(maps.errors()).singleElement().satisfies(p ->
                assertThat(p.path()).isEqualTo("x_extra" + ".a".repeat(127)));
    }

    @Test
    void aDocumentAtTheBoundIsRead() {
        // 128 levels: the root map, then 127 lists; the unknown key is only a warning.
        LoadResult result = TestConfigs.load(TestConfigs.ONE_BACKEND + blockLists("x_extra", 127));
        assertThat(result.errors()).isEmpty();
        assertThat(result.ok()).isTrue();
    }

    @Test
    void aliasesExpandingPastTheBoundAreRefused() {
        // Each anchor nests the one before ten levels deeper, so the levels add up beyond the bound though no line
        // nests deep (and fewer aliases are used than SnakeYAML's own limit of 50).
        StringBuilder doc = new StringBuilder(TestConfigs.ONE_BACKEND).append("x_0: &a0 [1]\n");
        for (int i = 1; i <= 14; i++) {
            doc.append("x_").append(i).append(": &a").append(i).append(' ').append("[".repeat(10)).append("*a")
                    .append(i - 1).append("]".repeat(10)).append('\n');
        }
        LoadResult result = TestConfigs.load(doc.toString());
        assertThat(result.ok()).isFalse();
        assertThat(result.errors()).singleElement().satisfies(p ->
                assertThat(p.message()).contains("too deep after expanding aliases").contains("<config>:")
                        .contains("nested at most 128 levels"));
    }

    @Test
    void aliasExpansionIsBoundedInValuesAndInAliasCount() {
        // Ten aliases per level: x_e stands for 100,000 scalars though the text is a few hundred bytes.
        String laughs = TestConfigs.ONE_BACKEND + "x_a: &a [v, v, v, v, v, v, v, v, v, v]\n"
                + "x_b: &b [*a" + ", *a".repeat(9) + "]\n"
                + "x_c: &c [*b" + ", *b".repeat(9) + "]\n"
                + "x_d: &d [*c" + ", *c".repeat(9) + "]\n"
                + "x_e: &e [*d" + ", *d".repeat(9) + "]\n";
        LoadResult result = TestConfigs.load(laughs);
        assertThat(result.ok()).isFalse();
        assertThat(result.errors()).singleElement().satisfies(p ->
                assertThat(p.message()).contains("too large or too deep after expanding aliases"));
        // More than 50 aliases of maps and lists is refused by SnakeYAML before anything expands.
        StringBuilder many = new StringBuilder(TestConfigs.ONE_BACKEND).append("x_a: &a [v]\nx_b: [");
        many.append("*a, ".repeat(60)).append("*a]\n");
        assertThat(TestConfigs.load(many.toString()).errors()).singleElement().satisfies(p ->
                assertThat(p.message()).startsWith("invalid YAML").contains("aliases"));
    }

    @Test
    void aReloadOfADeepFileIsRefusedAndTheRunningConfigStays() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, TestConfigs.ONE_BACKEND);
        ConfigStore store = ConfigStore.builder(TestConfigs.loader(dir, Map.of())
                .overrides(ConfigOverrides.none().withConfigFile(file)).build()).build();
        try {
            RouterConfig before = store.current();
            Files.writeString(file, TestConfigs.ONE_BACKEND + flowLists("x_extra", LEVELS));
            ReloadResult result = store.reload("test");
            assertThat(result.result()).isEqualTo(ReloadResult.Outcome.FAILURE);
            assertThat(result.toTree().toString()).contains("nested deeper than 128 levels at config.yaml:2:");
            assertThat(store.current()).isSameAs(before);
            assertThat(store.validate(blockLists("x_extra", LEVELS), false).errors()).singleElement()
                    .satisfies(p -> assertThat(p.message()).startsWith("nested deeper than 128 levels"));
        } finally {
            store.stop().join();
        }
    }

    @Test
    void aDeepApiKeysFileIsAnErrorAtItsPath() throws IOException {
        Files.writeString(dir.resolve("keys.yaml"), "api_keys:\n  - " + "- ".repeat(LEVELS) + "x\n");
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, TestConfigs.ONE_BACKEND + "api_keys:\n  api_keys_file: keys.yaml\n");
        LoadResult result = TestConfigs.loader(dir, Map.of()).overrides(ConfigOverrides.none().withConfigFile(file))
                .build().load();
        assertThat(result.ok()).isFalse();
        assertThat(result.errors()).anySatisfy(p -> {
            assertThat(p.path()).startsWith("api_keys.api_keys_file");
            assertThat(p.message()).startsWith("nested deeper than 128 levels at keys.yaml:2:");
        });
    }
}
