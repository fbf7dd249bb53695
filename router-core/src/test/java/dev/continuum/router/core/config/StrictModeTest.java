package dev.continuum.router.core.config;

import static dev.continuum.router.core.config.TestConfigs.ONE_BACKEND;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Strict mode: every setting that loads without effect becomes an error; other warnings stay warnings. */
class StrictModeTest {
    private static final String NO_EFFECT = ONE_BACKEND + """
            cors: {enabled: true}
            tracing: {enabled: true}
            metrics: {persistence: {enabled: true}}
            rate_limiting: {storage: redis}
            server: {bind_adress: x}
            dynamo: {enabled: false, nothing_here: {}}
            """;

    private static LoadResult strict(String yaml) {
        return TestConfigs.loader(Path.of("."), Map.of()).strict(true).build().loadString(yaml);
    }

    @Test
    void theLoaderFlagRefusesEverySettingWithoutEffect() {
        LoadResult lax = TestConfigs.load(NO_EFFECT);
        LoadResult strict = strict(NO_EFFECT);

        assertThat(lax.ok()).isTrue();
        assertThat(strict.ok()).isFalse();
        assertThat(strict.errors()).extracting(Problem::path).containsExactlyInAnyOrder("cors", "tracing",
                "metrics.persistence", "rate_limiting.storage", "server.bind_adress", "dynamo.nothing_here");
        assertThat(strict.errors()).allSatisfy(p -> assertThat(p.message()).endsWith(Problems.STRICT_SUFFIX));
        assertThat(strict.errors()).extracting(Problem::path)
                .containsExactlyInAnyOrderElementsOf(lax.warnings().stream().map(Problem::path).toList());
    }

    @Test
    void serverStrictConfigAsksForItInTheDocument() {
        LoadResult r = TestConfigs.load(ONE_BACKEND + "server: {strict_config: true}\ncors: {enabled: true}\n");

        assertThat(r.ok()).isFalse();
        assertThat(TestConfigs.errorLines(r)).singleElement().asString()
                .isEqualTo("cors: " + DropInBinders.CORS_REASON + Problems.STRICT_SUFFIX);
        assertThat(TestConfigs.load(ONE_BACKEND + "server: {strict_config: false}\ncors: {enabled: true}\n").ok()).isTrue();
    }

    @Test
    void warningsAboutValuesThatDoActStayWarnings() {
        LoadResult r = strict("backends: [{name: a, url: \"http://h:1\"}, {name: b, url: \"http://h:1\"}]\n");

        assertThat(r.ok()).isTrue();
        assertThat(TestConfigs.warningLines(r)).singleElement().asString().contains("both entries reach one server");
    }
}
