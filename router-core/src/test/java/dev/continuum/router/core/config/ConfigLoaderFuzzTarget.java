package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Coverage-guided fuzzing of the config loader (docs/testing.md, "Fuzzing"): the fuzzer's text is a YAML
 * document, seeded with the shipped templates and a config with every secret kind (plain YAML files in
 * the inputs directory).
 *
 * <p>The contract checked: loading never throws; a config comes back exactly when there is no error, and an
 * error always names a problem; a loaded config renders ({@code config show}, YAML and JSON) without throwing,
 * and no secret value appears in either rendering. A secret is checked when it is at least 8 characters long
 * and occurs once in the document (so the text is not also a non-secret value elsewhere in it).
 */
class ConfigLoaderFuzzTarget {
    private static final ConfigLoader LOADER = TestConfigs.loader(java.nio.file.Path.of("").toAbsolutePath(),
            Map.of()).build();

    @FuzzTest(maxDuration = "10s")
    void loadingEndsInAConfigOrErrorsAndRenderingNeverShowsASecret(byte[] input) {
        String yaml = new String(input, StandardCharsets.UTF_8); // as the loader reads a file
        LoadResult result = LOADER.loadString(yaml);

        assertThat(result.ok()).isEqualTo(result.errors().isEmpty());
        result.report(); // every problem renders, with its location
        if (!result.ok()) {
            return;
        }
        RouterConfig config = result.config();
        ConfigRenderer renderer = LOADER.renderer();
        String shownYaml = renderer.yaml(config);
        String shownJson = renderer.json(config);
        for (String secret : secrets(config)) {
            if (secret.length() >= 8 && yaml.indexOf(secret) == yaml.lastIndexOf(secret)) {
                assertThat(shownYaml).doesNotContain(secret);
                assertThat(shownJson).doesNotContain(secret);
            }
        }
    }

    /** Every {@link Secret} reachable from the config's records, lists, maps and optionals. */
    private static List<String> secrets(Object root) {
        List<String> found = new ArrayList<>();
        walk(root, found, new IdentityHashMap<>());
        return found;
    }

    private static void walk(Object value, List<String> found, IdentityHashMap<Object, Boolean> seen) {
        if (value == null || seen.put(value, Boolean.TRUE) != null) {
            return;
        }
        if (value instanceof Secret secret) {
            found.add(secret.reveal());
        } else if (value instanceof Collection<?> items) {
            items.forEach(item -> walk(item, found, seen));
        } else if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                walk(k, found, seen);
                walk(v, found, seen);
            });
        } else if (value instanceof Optional<?> optional) {
            optional.ifPresent(v -> walk(v, found, seen));
        } else if (value.getClass().isRecord()) {
            for (RecordComponent component : value.getClass().getRecordComponents()) {
                try {
                    component.getAccessor().setAccessible(true);
                    walk(component.getAccessor().invoke(value), found, seen);
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }
}
