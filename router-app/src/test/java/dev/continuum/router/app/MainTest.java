package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    private static final String EXPECTED_WARNING = "# expected warning: ";

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    void validateExitsZeroAndPrintsWarningsForAValidFile() throws Exception {
        Path file = write("""
                backends:
                  - name: a
                    url: http://127.0.0.1:9
                    modles: [x]
                """);
        assertThat(run("config", "validate", file.toString())).isEqualTo(0);
        assertThat(stdout()).contains("backends[0].modles", "did you mean \"models\"", ": valid (");
    }

    @Test
    void validateStrictRefusesSettingsWithoutEffect() throws Exception {
        Path file = write("""
                backends: [{name: a, url: "http://127.0.0.1:9"}]
                tracing: {enabled: true}
                """);
        assertThat(run("config", "validate", file.toString())).isEqualTo(0);
        out.reset();
        err.reset();
        assertThat(run("config", "validate", "--strict", file.toString())).isEqualTo(1);
        assertThat(stderr()).contains("error: tracing: accepted for compatibility; has no effect in this build"
                + " (refused: strict mode", "invalid (1 error(s)");
    }

    @Test
    void validateRefusesADocumentNestedTenThousandLevelsWithOneCleanError() throws Exception {
        Path file = write("backends: [{name: a, url: \"http://127.0.0.1:9\"}]\nx_extra:\n  " + "- ".repeat(10_000)
                + "x\n");
        assertThat(run("config", "validate", file.toString())).isEqualTo(1);
        assertThat(stderr()).contains("error: x_extra" + "[0]".repeat(127) + ": nested deeper than 128 levels at "
                + file.getFileName() + ":3:", "invalid (1 error(s)").doesNotContain("Exception", "Error:", "\tat ");
        assertThat(run("config", "show", "--config", file.toString())).isEqualTo(1);
    }

    @Test
    void validateExitsOneAndPrintsEveryError() throws Exception {
        Path file = write("""
                server:
                  bind_address: "nowhere"
                backends:
                  - name: "bad name!"
                    url: ftp://h
                """);
        assertThat(run("config", "validate", file.toString())).isEqualTo(1);
        assertThat(stderr()).contains("server.bind_address", "backends[0].name", "backends[0].url", "invalid (3 error(s)");
    }

    @Test
    void showPrintsTheEffectiveConfigWithSecretsMasked() throws Exception {
        Path file = write("""
                backends:
                  - name: a
                    url: http://127.0.0.1:9
                    api_key: sk-live-abcdef
                admin:
                  auth:
                    token: tok-123456
                """);
        assertThat(run("config", "show", file.toString())).isEqualTo(0);
        assertThat(stdout()).contains("name: a", "api_key: '********'", "shutdown_grace_period: 30s")
                .doesNotContain("sk-live-abcdef").doesNotContain("tok-123456");
    }

    @Test
    void generatesASampleThatValidatesCleanly() throws Exception {
        assertThat(run("--generate-config")).isEqualTo(0);
        Path file = write(stdout());
        out.reset();
        assertThat(run("config", "validate", file.toString())).isEqualTo(0);
        assertThat(stdout()).contains(": valid (0 warning(s))");
    }

    @Test
    void everyShippedTemplateValidatesWithEveryModuleRegistered() throws Exception {
        Path templates = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(templates.resolve("config-templates"))) {
            templates = templates.getParent();
        }
        try (var files = Files.list(templates.resolve("config-templates"))) {
            for (Path template : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
                out.reset();
                err.reset();
                assertThat(Main.run(new String[] {"config", "validate", template.toString()},
                        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                        Map.of("CONTINUUM_ADMIN_TOKEN", "t"))).as(template + ": " + stderr()).isEqualTo(0);
                // A template may expect a warning only by saying why, on a line "# expected warning: PATH: why".
                List<String> expected = Files.readAllLines(template).stream()
                        .filter(line -> line.startsWith(EXPECTED_WARNING))
                        .map(line -> line.substring(EXPECTED_WARNING.length()).split(": ", 2)[0].trim())
                        .toList();
                assertThat(stdout()).as(template.toString())
                        .contains(": valid (" + expected.size() + " warning(s))");
                for (String path : expected) {
                    assertThat(stdout()).as(template.toString()).contains("warning: " + path + ": ");
                }
            }
        }
    }

    @Test
    void validateWarnsWhenDiscoveryRunsButNoRequestCanBePinned() throws Exception {
        Path file = write("""
                backends: [{name: dynamo-frontend, url: "http://127.0.0.1:8000"}]
                dynamo:
                  enabled: true
                  discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                  load: {direct_allow_cidrs: ["127.0.0.0/8"]}
                """);
        assertThat(run("config", "validate", file.toString())).isEqualTo(0);
        assertThat(stdout()).contains("warning: dynamo.shim.backends: unset while dynamo.enabled is true",
                "fix: list the frontend backends here", "disaggregated_serving.enabled: true", ": valid (1 warning(s))");
    }

    @Test
    void answersVersionHelpAndUsageErrors() {
        assertThat(run("--version")).isEqualTo(0);
        assertThat(stdout()).startsWith("continuum-router ");
        assertThat(run("--help")).isEqualTo(0);
        assertThat(stdout()).contains("config validate");
        assertThat(run("--frobnicate")).isEqualTo(2);
        assertThat(stderr()).contains("--frobnicate: unknown argument", "Usage:");
    }

    @Test
    void serveRefusesAnInvalidConfigWithExitOne() throws Exception {
        Path file = write("server: {bind_address: 42}\n");
        assertThat(run("serve", "--config", file.toString())).isEqualTo(1);
        assertThat(stderr()).contains("nothing was started", "server.bind_address");
    }

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
    }

    private Path write(String yaml) throws Exception {
        Path file = Files.createTempFile(dir, "config", ".yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }
}
