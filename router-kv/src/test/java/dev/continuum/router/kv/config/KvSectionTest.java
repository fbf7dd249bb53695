package dev.continuum.router.kv.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KvSectionTest {
    private static final KvSection SECTION = new KvSection();
    private static final String BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";
    private static final String PIN = "blake3:" + "ab".repeat(32);

    private static LoadResult load(String dynamoYaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build().loadString(BACKEND + dynamoYaml);
    }

    private static List<String> lines(List<Problem> problems) {
        return problems.stream().map(Problem::toString).toList();
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                Arguments.of("an uppercase checksum", "{pinned_artifacts: [\"blake3:" + "AB".repeat(32) + "\"]}",
                        "dynamo.kv.pinned_artifacts[0]: \"blake3:" + "AB".repeat(32) + "\" (expected: \"blake3:\" and "
                                + "64 lowercase hex digits, as b3sum prints them)"),
                Arguments.of("another algorithm", "{pinned_artifacts: [\"sha256:00\"]}",
                        "dynamo.kv.pinned_artifacts[0]: \"sha256:00\" (expected: \"blake3:\" and 64 lowercase hex "
                                + "digits, as b3sum prints them)"),
                Arguments.of("pins that are not a list", "{pinned_artifacts: abc}",
                        "dynamo.kv.pinned_artifacts: \"abc\" (expected: a list of \"blake3:<64 lowercase hex>\" "
                                + "checksums)"),
                Arguments.of("a negative credit", "{overlap_score_credit: -1}",
                        "dynamo.kv.overlap_score_credit: -1 (expected: a number from 0 to 1000000)"),
                Arguments.of("a temperature above 100", "{router_temperature: 101}",
                        "dynamo.kv.router_temperature: 101 (expected: a number from 0 to 100)"),
                Arguments.of("a busy threshold above 1",
                        "{conditional_disaggregation: {decode_busy_threshold: 1.5}}",
                        "dynamo.kv.conditional_disaggregation.decode_busy_threshold: 1.5 (expected: a number "
                                + "from 0 to 1)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void reportsEachRuleWithItsPath(String rule, String yaml, String error) {
        assertThat(lines(load("dynamo:\n  kv: " + yaml + "\n").errors())).containsExactly(error);
    }

    @Test
    void bindsEveryKeyAndWarnsOnlyAboutConditionalDisaggregationOnDynamo15() {
        LoadResult r = load("""
                dynamo:
                  kv:
                    enabled: true
                    allow_http_artifacts: false
                    allow_hf_artifacts: true
                    pinned_artifacts: ["%s", "%s"]
                    artifact_cache_dir: /var/cache/kv
                    send_token_data: true
                    overlap_score_credit: 0.5
                    prefill_load_scale: 2
                    router_temperature: 0.25
                    conditional_disaggregation: {enabled: true, decode_busy_threshold: 0.9}
                """.formatted(PIN, PIN));
        RouterConfig c = r.orThrow();

        assertThat(c.dynamo().section(SECTION)).isEqualTo(new KvConfig(true, false, true, List.of(PIN),
                "/var/cache/kv", true, 0.5, 2.0, 0.25, new KvConfig.ConditionalDisaggregation(true, 0.9)));
        assertThat(c.dynamo().section(SECTION).pinnedHex()).containsExactly("ab".repeat(32));
        // The picker fields are used now: the only warning left is the Dynamo 1.5.x direct-mode one.
        assertThat(lines(r.warnings())).contains(
                "dynamo.kv.conditional_disaggregation.enabled: " + KvSection.DIRECT_MODE_BYPASS)
                .noneMatch(w -> w.contains("overlap_score_credit") || w.contains("router_temperature")
                        || w.contains("prefill_load_scale"));
        assertThat(c.dynamo().section(SECTION).pickerSettings())
                .isEqualTo(new dev.continuum.router.shim.KvPickerSettings(0.5, 2.0, 0.25, true, 0.9));
    }

    @Test
    void bindsTheModeAndTheTtlsAndNamesTheFieldOfABadOne() {
        KvConfig c = load("dynamo:\n  kv: {mode: approximate, predicted_ttl: 0s, approximate_ttl: 90s}\n")
                .orThrow().dynamo().section(SECTION);
        assertThat(c.mode()).isEqualTo(KvConfig.Mode.APPROXIMATE);
        assertThat(c.predictedTtl()).isEqualTo(java.time.Duration.ZERO);
        assertThat(c.approximateTtl()).isEqualTo(java.time.Duration.ofSeconds(90));
        assertThat(KvConfig.DEFAULTS.mode()).isEqualTo(KvConfig.Mode.AUTO);
        assertThat(KvConfig.DEFAULTS.predictedTtl()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(KvConfig.DEFAULTS.approximateTtl()).isEqualTo(java.time.Duration.ofSeconds(120));

        assertThat(lines(load("dynamo:\n  kv: {mode: sometimes}\n").errors()))
                .singleElement().asString().startsWith("dynamo.kv.mode: \"sometimes\"")
                .contains("precise, approximate or auto");
        assertThat(lines(load("dynamo:\n  kv: {approximate_ttl: 0s}\n").errors()))
                .singleElement().asString().startsWith("dynamo.kv.approximate_ttl:");
        assertThat(lines(load("dynamo:\n  kv: {predicted_ttl: 2h}\n").errors()))
                .singleElement().asString().startsWith("dynamo.kv.predicted_ttl:");
        assertThat(SECTION.reloadClass(KvConfig.DEFAULTS, c)).isEqualTo(ReloadClass.IMMEDIATE);
    }

    @Test
    void defaultsWhenOmittedAndEveryChangeIsImmediate() {
        KvConfig d = load("").orThrow().dynamo().section(SECTION);

        assertThat(d).isEqualTo(KvConfig.DEFAULTS);
        assertThat(d.allowHttpArtifacts()).isTrue();
        assertThat(d.allowHfArtifacts()).isFalse();
        assertThat(d.sendTokenData()).isFalse();
        assertThat(SECTION.reloadClass(d, load("dynamo: {kv: {enabled: true, pinned_artifacts: [\"" + PIN + "\"]}}")
                .orThrow().dynamo().section(SECTION))).isEqualTo(ReloadClass.IMMEDIATE);
    }
}
