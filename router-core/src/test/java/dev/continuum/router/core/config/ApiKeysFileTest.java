package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ApiKeysFileTest {
    @TempDir
    Path dir;

    private LoadResult load(String config, Map<String, String> env) throws IOException {
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), TestConfigs.ONE_BACKEND + config);
        return TestConfigs.loader(dir, env).build().load(conf.resolve("config.yaml"));
    }

    @Test
    void readsAListOfKeysRelativeToTheConfigFileAndAppendsThemToTheInlineKeys() throws IOException {
        Files.createDirectories(dir.resolve("conf/secrets"));
        Files.writeString(dir.resolve("conf/secrets/keys.yaml"), """
                - key: "${FILE_KEY}"
                  id: from-file
                  scopes: [read]
                  rate_limit: {requests_per_second: 2, burst_capacity: 4}
                - key: second
                """);

        ApiKeysConfig keys = load("""
                api_keys:
                  mode: blocking
                  api_keys_file: secrets/keys.yaml
                  api_keys:
                    - key: inline
                      rate_limit: 120
                      expires_at: "2027-01-01T00:00:00Z"
                      allowed_backends: [a]
                """, Map.of("FILE_KEY", "k-from-env")).orThrow().apiKeys();

        assertThat(keys.apiKeysFile()).isEqualTo(dir.resolve("conf/secrets/keys.yaml"));
        assertThat(keys.keys()).extracting(ApiKeyConfig::id).containsExactly("key-0", "from-file", "key-2");
        assertThat(keys.inlineKeys()).extracting(ApiKeyConfig::id).containsExactly("key-0");
        assertThat(keys.fileKeys()).extracting(ApiKeyConfig::id).containsExactly("from-file", "key-2");
        assertThat(keys.keys().get(1).key().matches("k-from-env")).isTrue();
        assertThat(keys.keys().get(0).rateLimit()).isEqualTo(RateLimit.perMinute(120));
        assertThat(keys.keys().get(1).rateLimit()).isEqualTo(new RateLimit(2, 4));
        assertThat(keys.keys().get(0).expiresAt()).isEqualTo(Instant.parse("2027-01-01T00:00:00Z"));
        assertThat(keys.keys().get(0).allowedBackends()).containsExactly("a");
    }

    @Test
    void readsAMapHoldingTheKeysUnderApiKeys() throws IOException {
        Files.writeString(dir.resolve("conf-keys.yaml"), "api_keys:\n  - {key: k1, id: one}\n");

        ApiKeysConfig keys = load("api_keys: {api_keys_file: ../conf-keys.yaml}", Map.of()).orThrow().apiKeys();

        assertThat(keys.keys()).extracting(ApiKeyConfig::id).containsExactly("one");
    }

    @Test
    void reportsProblemsInsideTheFileWithItsPathAndLine() throws IOException {
        Files.createDirectories(dir.resolve("conf"));
        Files.writeString(dir.resolve("conf/keys.yaml"), "- {key: k1, id: a}\n- {key: k1, id: b, scope: [read]}\n");

        LoadResult r = load("api_keys: {api_keys_file: keys.yaml}", Map.of());

        assertThat(r.report()).containsExactly(
                "error: api_keys.api_keys_file[1].key: ******** (expected: a unique key value; ids \"a\" and \"b\" share one)"
                        + " [keys.yaml:2:9]",
                "warning: api_keys.api_keys_file[1].scope: unknown key (did you mean \"scopes\"?) [keys.yaml:2:27]");
    }

    @Test
    void refusesAFileThatHoldsNoKeyList() throws IOException {
        Files.createDirectories(dir.resolve("conf"));
        Files.writeString(dir.resolve("conf/keys.yaml"), "just text\n");

        LoadResult r = load("api_keys: {api_keys_file: keys.yaml}", Map.of());

        assertThat(TestConfigs.errorLines(r))
                .containsExactly("api_keys.api_keys_file: \"just text\" (expected: a list of keys, or a map with api_keys: [...])");
    }

    @Test
    void refusesDuplicateKeysAcrossInlineAndFileWithoutShowingThem() throws IOException {
        Files.createDirectories(dir.resolve("conf"));
        Files.writeString(dir.resolve("conf/keys.yaml"), "- {key: \"${K}\", id: file-key}\n");

        LoadResult r = load("api_keys: {api_keys_file: keys.yaml, api_keys: [{key: \"${K}\", id: inline-key}]}",
                Map.of("K", "very-secret-value"));

        assertThat(TestConfigs.errorLines(r)).containsExactly("api_keys.api_keys_file[0].key: ******** (expected: a unique"
                + " key value; ids \"inline-key\" and \"file-key\" share one)");
        assertThat(String.join("\n", r.report())).doesNotContain("very-secret-value");
    }
}
