package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SearchPathTest {
    @TempDir
    Path root;
    Path cwd;
    Path home;
    Path etc;
    Path userDir;

    @BeforeEach
    void directories() throws IOException {
        cwd = Files.createDirectories(root.resolve("cwd"));
        home = Files.createDirectories(root.resolve("home"));
        etc = Files.createDirectories(root.resolve("etc/continuum-router"));
        userDir = Files.createDirectories(home.resolve(".config/continuum-router"));
    }

    private ConfigLoader loader(ConfigOverrides overrides) {
        return ConfigLoader.builder().environment(Map.of()).overrides(overrides)
                .searchPath(new ConfigSearchPath(cwd, home, etc)).build();
    }

    private static void write(Path file, String logLevel) throws IOException {
        Files.writeString(file, TestConfigs.ONE_BACKEND + "logging: {level: " + logLevel + "}\n");
    }

    @Test
    void triesWorkingDirectoryThenUserThenSystemDirectory() throws IOException {
        write(etc.resolve("config.yaml"), "error");
        assertThat(loader(ConfigOverrides.none()).load().source()).isEqualTo(etc.resolve("config.yaml"));

        write(userDir.resolve("config.yml"), "warn");
        assertThat(loader(ConfigOverrides.none()).load().source()).isEqualTo(userDir.resolve("config.yml"));

        write(userDir.resolve("config.yaml"), "info");
        assertThat(loader(ConfigOverrides.none()).load().source()).isEqualTo(userDir.resolve("config.yaml"));

        write(cwd.resolve("config.yml"), "debug");
        LoadResult r = loader(ConfigOverrides.none()).load();
        assertThat(r.source()).isEqualTo(cwd.resolve("config.yml"));
        assertThat(r.orThrow().logging().level()).isEqualTo(LoggingConfig.Level.DEBUG);
        assertThat(r.orThrow().source()).isEqualTo(cwd.resolve("config.yml"));

        write(cwd.resolve("config.yaml"), "trace");
        assertThat(loader(ConfigOverrides.none()).load().orThrow().logging().level()).isEqualTo(LoggingConfig.Level.TRACE);
    }

    @Test
    void listsTheCandidatesInOrder() {
        assertThat(new ConfigSearchPath(cwd, home, etc).candidates()).containsExactly(
                cwd.resolve("config.yaml"), cwd.resolve("config.yml"), cwd.resolve("config.toml"),
                userDir.resolve("config.yaml"), userDir.resolve("config.yml"), userDir.resolve("config.toml"),
                etc.resolve("config.yaml"), etc.resolve("config.yml"), etc.resolve("config.toml"));
    }

    @Test
    void anExplicitConfigBeatsTheSearchAndResolvesAgainstTheWorkingDirectory() throws IOException {
        write(cwd.resolve("config.yaml"), "debug");
        write(cwd.resolve("other.yaml"), "error");

        LoadResult r = loader(ConfigOverrides.none().withConfigFile(Path.of("other.yaml"))).load();

        assertThat(r.source()).isEqualTo(cwd.resolve("other.yaml"));
        assertThat(r.orThrow().logging().level()).isEqualTo(LoggingConfig.Level.ERROR);
    }

    @Test
    void aMissingExplicitConfigIsAnError() {
        LoadResult r = loader(ConfigOverrides.none().withConfigFile(Path.of("nope.yaml"))).load();

        assertThat(TestConfigs.errorLines(r)).containsExactly("<root>: \"" + cwd.resolve("nope.yaml")
                + "\" (expected: a readable config file; not found)");
    }

    @Test
    void aTomlFileIsRefusedWithAClearError() throws IOException {
        Files.writeString(cwd.resolve("config.toml"), "[server]\n");
        write(etc.resolve("config.yaml"), "debug");

        LoadResult r = loader(ConfigOverrides.none()).load();

        assertThat(r.ok()).isFalse();
        assertThat(TestConfigs.errorLines(r)).singleElement().asString()
                .endsWith("(expected: a YAML config file; TOML is not supported in this build, convert it to YAML)");
    }

    @Test
    void noFileAnywhereGivesTheDefaultsWithAWarning() {
        LoadResult r = loader(ConfigOverrides.none()).load();

        assertThat(r.ok()).isTrue();
        assertThat(r.source()).isNull();
        assertThat(r.orThrow()).isEqualTo(RouterConfig.defaults());
        assertThat(TestConfigs.warningLines(r)).first().asString().startsWith("<root>: no config file found (searched [");
    }

    @Test
    void theUserDirectoryIsHomeFromTheEnvironmentAndTildeIsHomeInTheConfigFileAndInPaths() throws IOException {
        assertThat(ConfigSearchPath.standard(Map.of("HOME", home.toString())).homeDirectory()).isEqualTo(home);
        Files.writeString(home.resolve("keys.yaml"), "- {key: k-1, id: one}\n");
        Files.writeString(home.resolve("router.yaml"), TestConfigs.ONE_BACKEND
                + "api_keys: {api_keys_file: \"~/keys.yaml\"}\n");

        LoadResult r = ConfigLoader.builder().environment(Map.of("HOME", home.toString()))
                .overrides(ConfigOverrides.none().withConfigFile(Path.of("~/router.yaml")))
                .searchPath(ConfigSearchPath.standard(Map.of("HOME", home.toString()))).build().load();

        assertThat(r.problems()).isEmpty();
        assertThat(r.source()).isEqualTo(home.resolve("router.yaml"));
        assertThat(r.orThrow().apiKeys().apiKeysFile()).isEqualTo(home.resolve("keys.yaml"));
        assertThat(HomeDirectory.expand("~other/x", home)).isEqualTo("~other/x");
    }
}
