package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.continuum.router.core.config.internal.YamlTrees;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Map;

/**
 * Coverage-guided fuzzing of the YAML reader at depth (docs/testing.md, "Fuzzing"): the fuzzer chooses a nesting
 * of up to 20,000 levels (block lists, then flow lists and maps, some anchored, aliases of them elsewhere) under
 * one key of an otherwise valid config, and bytes of its own after it. The contract: loading never throws (no
 * {@link StackOverflowError} at any depth); a config comes back exactly when there is no error; and a document
 * without the fuzzer's tail that nests deeper than {@link YamlTrees#MAX_DEPTH} is refused with the depth error.
 */
class DeepYamlFuzzTarget {
    private static final ConfigLoader LOADER = TestConfigs.loader(Path.of("").toAbsolutePath(), Map.of()).build();

    @FuzzTest(maxDuration = "10s")
    void anyNestingEndsInAConfigOrAnErrorNeverAnOverflow(FuzzedDataProvider data) {
        int blocks = data.consumeInt(0, 10_000);
        int flows = data.consumeInt(0, 10_000);
        StringBuilder doc = new StringBuilder(TestConfigs.ONE_BACKEND).append("x_extra:\n  ");
        doc.append("- ".repeat(blocks));
        ArrayDeque<Character> closers = new ArrayDeque<>();
        int anchors = 0;
        for (int i = 0; i < flows; i++) {
            if (data.remainingBytes() > 0 && data.consumeInt(0, 63) == 0 && anchors < 40) {
                doc.append("&a").append(anchors++).append(' ');
            }
            if (data.remainingBytes() == 0 || data.consumeBoolean()) {
                doc.append('[');
                closers.push(']');
            } else {
                doc.append("{k: ");
                closers.push('}');
            }
        }
        doc.append(flows == 0 ? "v" : "1");
        while (!closers.isEmpty()) {
            doc.append(closers.pop());
        }
        doc.append('\n');
        for (int i = 0; i < anchors && data.remainingBytes() > 0; i++) {
            if (data.consumeBoolean()) {
                doc.append("x_alias_").append(i).append(": [*a").append(data.consumeInt(0, anchors - 1)).append("]\n");
            }
        }
        String tail = data.consumeRemainingAsString();
        doc.append(tail);

        LoadResult result = LOADER.loadString(doc.toString());

        assertThat(result.ok()).isEqualTo(result.errors().isEmpty());
        result.report();
        // The root map, x_extra's value and every level under it.
        if (tail.isEmpty() && 1 + blocks + flows > YamlTrees.MAX_DEPTH) {
            assertThat(result.ok()).isFalse();
            assertThat(result.errors()).anySatisfy(p -> assertThat(p.message()).startsWith("nested deeper than "
                    + YamlTrees.MAX_DEPTH + " levels at <config>:"));
        }
    }
}
