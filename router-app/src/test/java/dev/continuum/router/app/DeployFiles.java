package dev.continuum.router.app;

import dev.continuum.router.core.config.LoadResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** What the deploy artifact tests share: the repository's files, YAML documents, and the router's own validation. */
final class DeployFiles {
    private DeployFiles() {
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("deploy")) || !Files.isDirectory(dir.resolve("config-templates"))) {
            dir = Objects.requireNonNull(dir.getParent(), "no repository root above the working directory");
        }
        return dir;
    }

    /** Every non-empty document of a multi-document YAML stream, as maps. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> documents(String yaml) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(yaml)) {
            if (doc instanceof Map<?, ?> map) {
                out.add((Map<String, Object>) map);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> yamlMap(String yaml) {
        return (Map<String, Object>) new Load(LoadSettings.builder().build()).loadFromString(yaml);
    }

    /** The one document of {@code kind} (and name, when given). */
    static Map<String, Object> only(List<Map<String, Object>> docs, String kind) {
        List<Map<String, Object>> found = docs.stream().filter(d -> kind.equals(d.get("kind"))).toList();
        if (found.size() != 1) {
            throw new AssertionError("expected one " + kind + ", found " + found.size());
        }
        return found.get(0);
    }

    /** The value at a path of map keys and list indexes, for example {@code at(doc, "spec", "template", "spec")}. */
    @SuppressWarnings("unchecked")
    static <T> T at(Object root, Object... path) {
        Object node = root;
        for (Object step : path) {
            if (step instanceof Integer index) {
                node = ((List<Object>) node).get(index);
            } else {
                node = ((Map<String, Object>) node).get(step);
            }
            if (node == null) {
                throw new AssertionError("nothing at " + List.of(path) + " (stopped at " + step + ")");
            }
        }
        return (T) node;
    }

    /** Loads config text as {@code serve} would, with every Dynamo module's section registered. */
    static LoadResult validate(String configYaml, Map<String, String> env) throws IOException {
        Path file = Files.createTempFile("deploy-config", ".yaml");
        try {
            Files.writeString(file, configYaml, StandardCharsets.UTF_8);
            return validate(file, env);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    static LoadResult validate(Path file, Map<String, String> env) {
        try {
            return Main.loader(CommandLine.parse("config", "validate", file.toString()), env).load();
        } catch (CommandLine.UsageException e) {
            throw new AssertionError(e);
        }
    }

    /** {@code server.shutdown_grace_period} of a loaded config, in whole seconds rounded up. */
    static long drainSeconds(LoadResult result) {
        long millis = result.orThrow().server().shutdownGracePeriod().toMillis();
        return (millis + 999) / 1000;
    }
}
