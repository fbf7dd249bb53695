package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.RouterConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} cannot fall behind the config: every key the readback of the fixtures writes
 * (with every Dynamo section of this build registered) must be named in the page, under the heading of its
 * section ({@code ### `dynamo.shim`} for {@code dynamo.shim.model_map}, the deepest heading that is a prefix
 * of the key), as a code span or part of one ({@code `etcd.tls.{ca_cert, client_key}`} names both keys).
 */
class ConfigurationDocTest {
    private static final Path FIXTURES = Path.of("src/test/resources/dev/continuum/router/app/readback");
    private static final Map<String, String> ENV = Map.of("BACKEND_KEY", "k", "ADMIN_TOKEN", "t", "CLIENT_KEY", "c",
            "BYPASS", "b", "ETCD_PASSWORD", "p", "FILE_KEY", "f", "CLIENT_KEY_FILE", "/k.pem");
    private static final Pattern HEADING = Pattern.compile("^### `([a-z_.]+)`.*$", Pattern.MULTILINE);
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern WORD = Pattern.compile("[a-z][a-z0-9_]*");
    /** Maps whose keys are the user's data (client model IDs, backend names), not config keys. */
    private static final Set<String> FREE_FORM_MAPS = Set.of("dynamo.shim.model_map", "fallback.fallback_chains",
            "global_prompts.backends", "global_prompts.models");

    @Test
    void everyReadbackKeyIsDocumentedUnderItsSection() throws Exception {
        Map<String, Set<String>> documented = documentedNames(Files.readString(repositoryRoot()
                .resolve("docs/configuration.md")));
        Set<String> keys = new TreeSet<>();
        try (Stream<Path> files = Files.list(FIXTURES)) {
            for (Path fixture : files.filter(f -> f.toString().endsWith(".yaml")
                    && !f.getFileName().toString().equals("keys.yaml")).toList()) {
                ConfigLoader loader = Main.loader(CommandLine.parse("config", "show", fixture.toString()), ENV);
                RouterConfig config = loader.load().orThrow();
                collect("", loader.renderer().tree(config), keys);
            }
        }
        assertThat(keys).contains("dynamo.shim.pools.namespace", "server.bind_address");

        List<String> undocumented = new ArrayList<>();
        for (String key : keys) {
            String section = documented.keySet().stream().filter(h -> key.equals(h) || key.startsWith(h + "."))
                    .max((a, b) -> Integer.compare(a.length(), b.length())).orElse(null);
            String leaf = key.substring(key.lastIndexOf('.') + 1);
            if (section == null || !(key.equals(section) || documented.get(section).contains(leaf))) {
                undocumented.add(key + (section == null ? " (no section heading)" : " (under " + section + ")"));
            }
        }
        assertThat(undocumented).as("keys of the readback that docs/configuration.md does not name").isEmpty();
    }

    /** Every map key path of the tree; list elements share their list's path. */
    private static void collect(String prefix, Object node, Set<String> out) {
        if (FREE_FORM_MAPS.contains(prefix)) {
            return;
        }
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                String path = prefix.isEmpty() ? String.valueOf(k) : prefix + "." + k;
                out.add(path);
                collect(path, v, out);
            });
        } else if (node instanceof List<?> list) {
            list.forEach(e -> collect(prefix, e, out));
        }
    }

    /** Section heading to the words of the code spans between it and the next heading. */
    private static Map<String, Set<String>> documentedNames(String page) {
        Map<String, Set<String>> out = new HashMap<>();
        Matcher headings = HEADING.matcher(page);
        List<int[]> bounds = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (headings.find()) {
            names.add(headings.group(1));
            bounds.add(new int[] {headings.start(), headings.end()});
        }
        for (int i = 0; i < names.size(); i++) {
            int end = i + 1 < names.size() ? bounds.get(i + 1)[0] : page.length();
            String body = page.substring(bounds.get(i)[1], end);
            int nextChapter = body.indexOf("\n## ");
            if (nextChapter >= 0) {
                body = body.substring(0, nextChapter);
            }
            Set<String> words = new HashSet<>();
            Matcher spans = CODE_SPAN.matcher(body);
            while (spans.find()) {
                Matcher w = WORD.matcher(spans.group(1));
                while (w.find()) {
                    words.add(w.group());
                }
            }
            out.merge(names.get(i), words, (a, b) -> {
                a.addAll(b);
                return a;
            });
        }
        return out;
    }

    private static Path repositoryRoot() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("docs"))) {
            dir = dir.getParent();
        }
        return dir;
    }
}
