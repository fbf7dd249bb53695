package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pins what a user sees of the effective config, byte for byte: the YAML of {@code config show} and the JSON
 * body of {@code GET /admin/config}, for every fixture under {@code readback/}, every shipped template and the
 * demo's embedded config, with every Dynamo section of this build registered. A renderer change that alters
 * either output fails here. After an intended change, regenerate the expected files with
 * {@code -Dreadback.golden.update=true} and review the diff.
 */
class ReadbackGoldenTest {
    private static final Path FIXTURES = Path.of("src/test/resources/dev/continuum/router/app/readback")
            .toAbsolutePath();
    /** Fixed values for every variable a fixture or template reads, so the outputs do not depend on the machine. */
    private static final Map<String, String> ENV = Map.ofEntries(
            Map.entry("BACKEND_KEY", "sk-backend-0001"), Map.entry("ADMIN_TOKEN", "adm-token-0002"),
            Map.entry("CLIENT_KEY", "client-key-0003"), Map.entry("BYPASS", "bypass-key-0004"),
            Map.entry("ETCD_PASSWORD", "etcd-pass-0005"), Map.entry("FILE_KEY", "file-key-0006"),
            Map.entry("CLIENT_KEY_FILE", "/etc/etcd/c-key.pem"), Map.entry("CONTINUUM_ADMIN_TOKEN", "t-0008"),
            Map.entry("CONTINUUM_DEMO_FRONTEND", "http://127.0.0.1:8001"),
            Map.entry("CONTINUUM_DEMO_FILE_ROOT", "/var/tmp/demo-store"),
            Map.entry("DYN_FILE_KV", "/var/lib/dynamo-kv"));
    private static final boolean UPDATE = Boolean.getBoolean("readback.golden.update");

    record Fixture(String name, Path file) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Fixture> fixtures() throws IOException {
        List<Fixture> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(FIXTURES)) {
            files.filter(f -> f.toString().endsWith(".yaml") && !f.toString().endsWith(".show.yaml")
                            && !f.getFileName().toString().equals("keys.yaml"))
                    .sorted()
                    .forEach(f -> out.add(new Fixture(baseName(f), f)));
        }
        try (Stream<Path> files = Files.list(templates())) {
            files.filter(f -> f.toString().endsWith(".yaml")).sorted()
                    .forEach(f -> out.add(new Fixture("template-" + baseName(f), f)));
        }
        out.add(new Fixture("demo", Path.of("src/main/resources/dev/continuum/router/app/demo.yaml").toAbsolutePath()));
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void configShowYamlIsUnchanged(Fixture fixture) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(new String[] {"config", "show", fixture.file().toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                ENV);
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        compare(fixture.name() + ".show.yaml", out.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void adminReadbackJsonIsUnchanged(Fixture fixture) throws Exception {
        ConfigLoader loader = Main.loader(CommandLine.parse("config", "show", fixture.file().toString()),
                ENV);
        LoadResult result = loader.load();
        assertThat(result.errors()).isEmpty();
        // The admin route serialises the readback tree with a default ObjectMapper.
        String json = new ObjectMapper().writeValueAsString(loader.renderer().tree(result.orThrow()));
        compare(fixture.name() + ".admin.json", json + "\n");
    }

    private static void compare(String expectedName, String actual) throws IOException {
        String portable = actual.replace(FIXTURES.toString(), "<fixtures>");
        Path expected = FIXTURES.resolve("expected").resolve(expectedName);
        if (UPDATE) {
            Files.createDirectories(expected.getParent());
            Files.writeString(expected, portable);
        }
        assertThat(portable).isEqualTo(Files.readString(expected));
    }

    private static Path templates() {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("config-templates"))) {
            dir = dir.getParent();
        }
        return dir.resolve("config-templates");
    }

    private static String baseName(Path f) {
        String name = f.getFileName().toString();
        return name.substring(0, name.length() - ".yaml".length());
    }
}
