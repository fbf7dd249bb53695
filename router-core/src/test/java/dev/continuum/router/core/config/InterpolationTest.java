package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.internal.Interpolator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InterpolationTest {
    private static final Map<String, String> ENV = Map.of("HOST", "gpu-1", "PORT", "8000", "EMPTY", "");

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "http://${HOST}:${PORT}      | http://gpu-1:8000",
        "${MISSING:-fallback}        | fallback",
        "${EMPTY:-fallback}          | fallback",
        "${EMPTY-fallback}           | ''",
        "${MISSING-fallback}         | fallback",
        "${HOST:-unused}             | gpu-1",
        "cost: $$5                   | cost: $5",
        "pa$word                     | pa$word",
        "trailing $                  | trailing $",
        "$${HOST}                    | ${HOST}",
        "${MISSING:-a-b:c}           | a-b:c",
    })
    void substitutesVariablesAndDefaults(String text, String expected) {
        Interpolator.Result r = Interpolator.apply(text.strip(), ENV);
        assertThat(r.error()).isNull();
        assertThat(r.value()).isEqualTo(expected.strip());
        assertThat(r.unset()).isEmpty();
    }

    @Test
    void substitutesAnEmptyStringForAnUnsetVariableAndNamesIt() {
        Interpolator.Result r = Interpolator.apply("a${NOPE}b", ENV);
        assertThat(r.value()).isEqualTo("ab");
        assertThat(r.unset()).containsExactly("NOPE");
    }

    @Test
    void refusesMalformedReferences() {
        assertThat(Interpolator.apply("${UNCLOSED", ENV).error()).isEqualTo("${UNCLOSED");
        assertThat(Interpolator.apply("${1BAD}", ENV).error()).isEqualTo("${1BAD}");
        assertThat(Interpolator.apply("${}", ENV).error()).isEqualTo("${}");
    }

    @Test
    void interpolatesInsideTheConfigAndWarnsWithPathAndVariable() {
        LoadResult r = TestConfigs.load("""
                backends:
                  - name: "${NAME:-a}"
                    url: "http://${HOST}:${PORT}"
                    api_key: "${NOT_SET}"
                    weight: ${WEIGHT}
                """, Map.of("HOST", "gpu-1", "PORT", "8000", "WEIGHT", "7"));

        BackendConfig b = r.orThrow().backends().get(0);
        assertThat(b.name()).isEqualTo("a");
        assertThat(b.url()).hasToString("http://gpu-1:8000");
        assertThat(b.weight()).isEqualTo(7);
        assertThat(b.apiKey()).isNull();
        assertThat(TestConfigs.warningLines(r))
                .containsExactly("backends[0].api_key: ${NOT_SET} is not set; substituted an empty string");
    }

    @Test
    void doesNotInterpolateOrWarnForValuesNobodyReads() {
        LoadResult r = TestConfigs.load(TestConfigs.ONE_BACKEND + "webui: {token: \"${NOT_SET}\"}");

        assertThat(TestConfigs.warningLines(r))
                .containsExactly("webui: accepted for compatibility; has no effect in this build");
    }

    @Test
    void keepsSecretsOutOfMessagesEvenWhenTheirValueIsInvalid() {
        LoadResult r = TestConfigs.load(TestConfigs.ONE_BACKEND
                + "admin: {auth: {token: [\"${T}\"]}}\n"
                + "rate_limiting: {bypass_keys: [{k: \"${T}\"}]}", Map.of("T", "hunter2-very-secret"));

        assertThat(r.ok()).isFalse();
        assertThat(String.join("\n", r.report())).doesNotContain("hunter2");
    }
}
