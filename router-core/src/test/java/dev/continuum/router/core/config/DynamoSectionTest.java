package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DynamoSectionTest {
    private static final TestDiscoverySection DISCOVERY = new TestDiscoverySection();

    private static LoadResult load(String yaml, Map<String, String> env) {
        return TestConfigs.loader(Path.of("").toAbsolutePath(), env).dynamoSection(DISCOVERY).build()
                .loadString(TestConfigs.ONE_BACKEND + yaml);
    }

    @Test
    void bindsARegisteredSectionThroughTheConfigNode() {
        RouterConfig c = load("""
                dynamo:
                  enabled: true
                  discovery: {endpoints: ["http://e:2379"], backoff: 2s, auth: {password: "${P}"}}
                """, Map.of("P", "pw")).orThrow();

        TestDiscoverySection.Discovery d = c.dynamo().section(DISCOVERY);
        assertThat(d.endpoints()).containsExactly("http://e:2379");
        assertThat(d.backoff()).isEqualTo(Duration.ofSeconds(2));
        assertThat(d.password()).isEqualTo(Secret.of("pw"));
    }

    @Test
    void givesTheDefaultsWhenTheYamlOmitsTheSection() {
        RouterConfig c = load("", Map.of()).orThrow();

        assertThat(c.dynamo().section(DISCOVERY)).isEqualTo(DISCOVERY.defaults());
    }

    @Test
    void reportsTheSectionsProblemsAndUnknownKeysWithFullPaths() {
        LoadResult r = load("dynamo: {enabled: true, discovery: {backoff: 1ms, endpoint: x}, shim: {}}", Map.of());

        assertThat(TestConfigs.errorLines(r)).containsExactly(
                "dynamo.discovery.backoff: \"1ms\" (expected: a duration from 100ms to 5m)",
                "dynamo.discovery.endpoints: [] (expected: at least one endpoint when dynamo.enabled)");
        assertThat(TestConfigs.warningLines(r)).containsExactly(
                "dynamo.shim: section is not handled by this build; it is parsed but inactive",
                "dynamo.discovery.endpoint: unknown key (did you mean \"endpoints\"?)");
    }

    @Test
    void letsTheSectionDecideItsReloadClass() {
        RouterConfig before = load("dynamo: {discovery: {endpoints: [a]}}", Map.of()).orThrow();
        RouterConfig moreBackoff = load("dynamo: {discovery: {endpoints: [a], backoff: 1s}}", Map.of()).orThrow();
        RouterConfig otherEndpoints = load("dynamo: {discovery: {endpoints: [b]}}", Map.of()).orThrow();

        assertThat(ReloadPlanner.plan(before, moreBackoff, List.of(DISCOVERY)).changes())
                .containsExactly(new ReloadPlan.Change("dynamo.discovery", ReloadClass.IMMEDIATE));
        assertThat(ReloadPlanner.plan(before, otherEndpoints, List.of(DISCOVERY)).changes())
                .containsExactly(new ReloadPlan.Change("dynamo.discovery", ReloadClass.RESTART_SUBSYSTEM));
    }

    @Test
    void rendersTheSectionWithItsSecretsMasked() {
        RouterConfig c = load("dynamo: {discovery: {endpoints: [a], auth: {password: hunter2}}}", Map.of()).orThrow();

        Map<String, Object> tree = ConfigRenderer.get().tree(c);

        assertThat(tree.get("dynamo")).isEqualTo(Map.of("enabled", false, "discovery",
                Map.of("endpoints", List.of("a"), "backoff", "500ms", "auth", Map.of("password", Secret.MASK))));
    }

    record Shim(List<String> backends, Duration staleness, @Nullable Secret token, Mode mode) {
        enum Mode { DIRECT, BROKER }
    }

    @Test
    void rendersRecordsWithSnakeCaseKeysByDefault() {
        DynamoSection<Shim> shim = new DynamoSection<>() {
            @Override
            public String key() {
                return "shim";
            }

            @Override
            public Class<Shim> type() {
                return Shim.class;
            }

            @Override
            public Shim defaults() {
                return new Shim(List.of(), Duration.ofSeconds(3), null, Shim.Mode.DIRECT);
            }

            @Override
            public Shim bind(ConfigNode node, Problems problems) {
                return new Shim(List.of("f"), Duration.ofSeconds(3), Secret.of("t"), Shim.Mode.BROKER);
            }

            @Override
            public ReloadClass reloadClass(Shim before, Shim after) {
                return ReloadClass.IMMEDIATE;
            }
        };

        RouterConfig c = TestConfigs.loader(Path.of("").toAbsolutePath(), Map.of()).dynamoSection(shim).build()
                .loadString("").orThrow();

        assertThat(ConfigRenderer.get().tree(c).get("dynamo")).isEqualTo(Map.of("enabled", false, "shim",
                Map.of("backends", List.of("f"), "staleness", "3s", "token", Secret.MASK, "mode", "broker")));
    }

    @Test
    void refusesTwoSectionsWithOneKey() {
        ConfigLoader.Builder b = ConfigLoader.builder().dynamoSection(DISCOVERY);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.dynamoSection(new TestDiscoverySection()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
