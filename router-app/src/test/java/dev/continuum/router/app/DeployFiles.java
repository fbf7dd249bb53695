package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.LoadResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
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

    /** {@code dir} rendered by the real kustomize ({@code kubectl kustomize}), as YAML documents. */
    static List<Map<String, Object>> kustomize(Path dir) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kubectl", "kustomize", dir.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("kubectl kustomize " + dir).isEqualTo(0);
        return documents(out);
    }

    /**
     * An agent's (event broker's or kv-listener's) rendered config, checked to read its bus token and router CA
     * from the Pod's {@code token} and {@code router-ca} mounts, with the token from Secret {@code tokenSecret};
     * returns it written under {@code tmp} with those two paths pointing at stand-in files, for the agent's own
     * validation.
     */
    static Path agentConfigAsMounted(Map<String, Object> pod, String config, String tokenSecret, Path tmp)
            throws IOException {
        List<Map<String, Object>> mounts = at(pod, "containers", 0, "volumeMounts");
        Map<String, String> mountByVolume = new HashMap<>();
        mounts.forEach(m -> mountByVolume.put((String) m.get("name"), (String) m.get("mountPath")));
        Map<String, Object> bus = at(yamlMap(config), "bus");
        String tokenFile = (String) bus.get("token_file");
        String caFile = at(bus, "tls", "ca");
        assertThat(Path.of(tokenFile).getParent()).hasToString(mountByVolume.get("token"));
        assertThat(Path.of(caFile).getParent()).hasToString(mountByVolume.get("router-ca"));
        assertThat((String) at(pod, "volumes", 2, "secret", "secretName")).isEqualTo(tokenSecret);

        Path token = Files.writeString(tmp.resolve("token"), "t0ken-for-the-test");
        Path ca = Files.writeString(tmp.resolve("ca.crt"), "placeholder");
        return Files.writeString(tmp.resolve("config.yaml"),
                config.replace(tokenFile, token.toString()).replace(caFile, ca.toString()));
    }
}
