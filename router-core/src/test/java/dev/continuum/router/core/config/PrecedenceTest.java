package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Command line beats environment beats file beats defaults. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PrecedenceTest {
    @TempDir
    Path dir;

    private RouterConfig load(String fileYaml, Map<String, String> env, ConfigOverrides cli) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, TestConfigs.ONE_BACKEND + fileYaml);
        return TestConfigs.loader(dir, env).overrides(cli).build().load().orThrow();
    }

    @Test
    void commandLineBeatsEnvironmentBeatsFileBeatsDefaults() throws IOException {
        String file = "logging: {level: debug}\nserver: {bind_address: \"10.0.0.1:1000\"}\n"
                + "metrics: {enabled: false, endpoint: /file-metrics}\n";
        Map<String, String> env = Map.of("CONTINUUM_LOG_LEVEL", "warn", "CONTINUUM_BIND_ADDRESS", "127.0.0.1:2000",
                "METRICS_ENABLED", "true", "METRICS_ENDPOINT", "/env-metrics");
        ConfigOverrides cli = ConfigOverrides.none().withLogLevel("error").withBindAddresses(List.of("127.0.0.1:3000"))
                .withMetricsEnabled(false).withMetricsEndpoint("/cli-metrics");

        RouterConfig fromCli = load(file, env, cli);
        assertThat(fromCli.logging().level()).isEqualTo(LoggingConfig.Level.ERROR);
        assertThat(fromCli.server().bindAddresses()).containsExactly(new BindAddress.Tcp("127.0.0.1", 3000));
        assertThat(fromCli.metrics()).isEqualTo(new MetricsConfig(false, "/cli-metrics"));

        RouterConfig fromEnv = load(file, env, ConfigOverrides.none());
        assertThat(fromEnv.logging().level()).isEqualTo(LoggingConfig.Level.WARN);
        assertThat(fromEnv.server().bindAddresses()).containsExactly(new BindAddress.Tcp("127.0.0.1", 2000));
        assertThat(fromEnv.metrics()).isEqualTo(new MetricsConfig(true, "/env-metrics"));

        RouterConfig fromFile = load(file, Map.of(), ConfigOverrides.none());
        assertThat(fromFile.logging().level()).isEqualTo(LoggingConfig.Level.DEBUG);
        assertThat(fromFile.server().bindAddresses()).containsExactly(new BindAddress.Tcp("10.0.0.1", 1000));
        assertThat(fromFile.metrics()).isEqualTo(new MetricsConfig(false, "/file-metrics"));

        RouterConfig defaults = load("", Map.of(), ConfigOverrides.none());
        assertThat(defaults.logging().level()).isEqualTo(LoggingConfig.Level.INFO);
        assertThat(defaults.server().bindAddresses()).isEqualTo(ServerConfig.defaults().bindAddresses());
        assertThat(defaults.metrics()).isEqualTo(MetricsConfig.defaults());
    }

    @Test
    void splitsTheBindAddressVariableOnCommas() throws IOException {
        RouterConfig c = load("", Map.of("CONTINUUM_BIND_ADDRESS", "127.0.0.1:1, [::1]:2 ,unix:/run/r.sock"),
                ConfigOverrides.none());

        assertThat(c.server().bindAddresses()).containsExactly(new BindAddress.Tcp("127.0.0.1", 1),
                new BindAddress.Tcp("::1", 2), new BindAddress.Unix(Path.of("/run/r.sock")));
    }

    @Test
    void reportsABadOverrideAtTheKeyItReplacesAndNamesTheVariable() throws IOException {
        Files.writeString(dir.resolve("config.yaml"), TestConfigs.ONE_BACKEND);
        LoadResult r = TestConfigs.loader(dir, Map.of("CONTINUUM_BIND_ADDRESS", "nowhere")).build().load();

        assertThat(r.report()).containsExactly("error: server.bind_address[0]: \"nowhere\" (expected: host:port,"
                + " [ipv6]:port or unix:/absolute/path) [environment variable CONTINUUM_BIND_ADDRESS]");
    }

    @Test
    void readsABareLevelFromRustLogWhenTheContinuumVariableIsUnset() throws IOException {
        assertThat(load("", Map.of("RUST_LOG", "debug"), ConfigOverrides.none()).logging().level())
                .isEqualTo(LoggingConfig.Level.DEBUG);
        assertThat(load("", Map.of("RUST_LOG", "debug", "CONTINUUM_LOG_LEVEL", "error"), ConfigOverrides.none())
                .logging().level()).isEqualTo(LoggingConfig.Level.ERROR);
    }

    @Test
    void ignoresRustLogTargetFiltersWithAWarning() throws IOException {
        Files.writeString(dir.resolve("config.yaml"), TestConfigs.ONE_BACKEND + "logging: {level: error}");
        Map<String, String> env = new HashMap<>();
        env.put("RUST_LOG", "info,hyper=warn");
        LoadResult mixed = TestConfigs.loader(dir, env).build().load();
        assertThat(mixed.orThrow().logging().level()).isEqualTo(LoggingConfig.Level.INFO);
        assertThat(TestConfigs.warningLines(mixed))
                .containsExactly("logging.level: RUST_LOG directives [hyper=warn] are not supported by this build; using level info");

        env.put("RUST_LOG", "continuum_router=trace");
        LoadResult filterOnly = TestConfigs.loader(dir, env).build().load();
        assertThat(filterOnly.orThrow().logging().level()).isEqualTo(LoggingConfig.Level.ERROR);
        assertThat(TestConfigs.warningLines(filterOnly)).containsExactly("logging.level: RUST_LOG=\"continuum_router=trace\""
                + " has no bare level this build can use (expected: trace, debug, info, warn or error); ignored");
    }

    @Test
    void treatsBlankVariablesAsUnset() throws IOException {
        RouterConfig c = load("logging: {level: debug}", Map.of("CONTINUUM_LOG_LEVEL", " ", "METRICS_ENDPOINT", ""),
                ConfigOverrides.none());
        assertThat(c.logging().level()).isEqualTo(LoggingConfig.Level.DEBUG);
        assertThat(c.metrics().endpoint()).isEqualTo("/metrics");
    }
}
