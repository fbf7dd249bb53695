package dev.continuum.router.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigRenderer;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.eventplane.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoadSectionTest {
    private static final LoadSection SECTION = new LoadSection();
    private static final String BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";

    private static LoadResult load(String dynamoYaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build().loadString(BACKEND + dynamoYaml);
    }

    private static List<String> lines(List<Problem> problems) {
        return problems.stream().map(Problem::toString).toList();
    }

    static Stream<Arguments> rules() {
        String sixtyFive = IntStream.range(0, 65).mapToObj(i -> "\"10.0." + i + ".0/24\"")
                .reduce((a, b) -> a + ", " + b).orElseThrow();
        return Stream.of(
                Arguments.of("max_staleness below 100ms", "{max_staleness: 99ms}",
                        "dynamo.load.max_staleness: \"99ms\" (expected: a duration from 100ms to 5m)"),
                Arguments.of("max_staleness above 5m", "{max_staleness: 301s}",
                        "dynamo.load.max_staleness: \"301s\" (expected: a duration from 100ms to 5m)"),
                Arguments.of("transport outside its vocabulary", "{transport: nats}",
                        "dynamo.load.transport: \"nats\" (expected: direct or broker)"),
                Arguments.of("a CIDR that is a host name", "{direct_allow_cidrs: [pods.internal]}",
                        "dynamo.load.direct_allow_cidrs[0]: \"pods.internal\" (expected: an IPv4 or IPv6 CIDR such as "
                                + "10.0.0.0/8 or fd00::/8; host names are not resolved)"),
                Arguments.of("a prefix out of range", "{direct_allow_cidrs: [\"10.0.0.0/33\"]}",
                        "dynamo.load.direct_allow_cidrs[0]: \"10.0.0.0/33\" (expected: an IPv4 or IPv6 CIDR such as "
                                + "10.0.0.0/8 or fd00::/8; host names are not resolved)"),
                Arguments.of("an empty list", "{direct_allow_cidrs: []}",
                        "dynamo.load.direct_allow_cidrs: [] (expected: at least one CIDR, or omit the key to allow "
                                + "any address)"),
                Arguments.of("more than 64 CIDRs", "{direct_allow_cidrs: [" + sixtyFive + "]}",
                        "dynamo.load.direct_allow_cidrs: 65 entries (expected: at most 64)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void reportsEachRuleWithItsPath(String rule, String yaml, String error) {
        LoadResult r = load("dynamo:\n  load: " + yaml + "\n");

        assertThat(lines(r.errors())).containsExactly(error);
    }

    @Test
    void bindsEveryKeyAtItsBounds() {
        RouterConfig c = load("""
                dynamo:
                  load: {max_staleness: 100ms, transport: direct, direct_allow_cidrs: ["10.0.0.0/8", "fd00::/8", "192.168.1.7"]}
                """).orThrow();

        assertThat(c.dynamo().section(SECTION)).isEqualTo(new LoadConfig(Duration.ofMillis(100), Transport.DIRECT,
                List.of("10.0.0.0/8", "fd00::/8", "192.168.1.7")));
        assertThat(load("dynamo: {load: {max_staleness: 5m}}").orThrow().dynamo().section(SECTION).maxStaleness())
                .isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void defaultsToThreeSecondsDirectAndAnUnsetAllowList() {
        assertThat(load("").orThrow().dynamo().section(SECTION)).isEqualTo(LoadConfig.DEFAULTS);
        assertThat(LoadConfig.DEFAULTS).isEqualTo(new LoadConfig(Duration.ofSeconds(3), Transport.DIRECT, null));
    }

    @Test
    void suggestsPodCidrsWhenDirectDialingIsUnrestricted() {
        LoadResult r = load("dynamo: {enabled: true, load: {}}");

        assertThat(lines(r.warnings())).contains("dynamo.load.direct_allow_cidrs: " + LoadSection.SUGGEST_CIDRS);
        assertThat(lines(load("dynamo: {enabled: true, load: {direct_allow_cidrs: [10.0.0.0/8]}}").warnings()))
                .noneMatch(l -> l.startsWith("dynamo.load"));
    }

    @Test
    void acceptsBrokerTransportWithAWarningThatSubscriptionsStayPending() {
        LoadResult r = load("dynamo: {load: {transport: broker}}");

        assertThat(r.ok()).isTrue();
        assertThat(lines(r.warnings())).contains("dynamo.load.transport: " + LoadSection.BROKER_WITHOUT_BUS);
        assertThat(lines(ConfigLoader.builder().dynamoSection(new LoadSection(true)).build()
                .loadString(BACKEND + "dynamo: {load: {transport: broker}}").warnings()))
                .noneMatch(l -> l.startsWith("dynamo.load.transport"));
    }

    @Test
    void reloadsMaxStalenessImmediatelyAndRestartsOnlySubscriptionsForTransportOrCidrs() {
        LoadConfig base = LoadConfig.DEFAULTS;

        assertThat(SECTION.reloadClass(base, new LoadConfig(Duration.ofSeconds(9), Transport.DIRECT, null)))
                .isEqualTo(ReloadClass.IMMEDIATE);
        assertThat(SECTION.reloadClass(base, new LoadConfig(base.maxStaleness(), Transport.BROKER, null)))
                .isEqualTo(ReloadClass.RESTART_SUBSYSTEM);
        assertThat(SECTION.reloadClass(base, new LoadConfig(base.maxStaleness(), Transport.DIRECT,
                List.of("10.0.0.0/8")))).isEqualTo(ReloadClass.RESTART_SUBSYSTEM);
    }

    @Test
    void rendersWithYamlKeysThatLoadBackToAnEqualValue() {
        RouterConfig c = load("dynamo: {load: {max_staleness: 1500ms, transport: broker, direct_allow_cidrs: [10.0.0.0/8]}}")
                .orThrow();

        Map<String, Object> tree = ConfigRenderer.get().tree(c);
        @SuppressWarnings("unchecked")
        Map<String, Object> rendered = (Map<String, Object>) ((Map<String, Object>) tree.get("dynamo")).get("load");

        assertThat(rendered).isEqualTo(Map.of("max_staleness", "1s500ms", "transport", "broker",
                "direct_allow_cidrs", List.of("10.0.0.0/8")));
        assertThat(load("dynamo: {load: {max_staleness: 1500ms, transport: broker, direct_allow_cidrs: [10.0.0.0/8]}}")
                .orThrow().dynamo().section(SECTION)).isEqualTo(c.dynamo().section(SECTION));
    }
}
