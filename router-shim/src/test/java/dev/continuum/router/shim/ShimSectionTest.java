package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigRenderer;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.discovery.config.DiscoverySection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShimSectionTest {
    private static final ShimSection SECTION = new ShimSection();
    private static final String BACKENDS = """
            backends:
              - {name: fe-a, url: "http://127.0.0.1:8000"}
              - {name: fe-b, url: "http://127.0.0.1:8001"}
              - {name: fe-c, url: "http://127.0.0.1:8002", internal: true}
              - {name: fe-d, url: "http://127.0.0.1:8003", enabled: false}
            disaggregated_serving: {enabled: true}
            """;

    private static LoadResult load(String yaml) {
        return ConfigLoader.builder().environment(Map.of())
                .dynamoSection(DiscoverySection.create(Map.of())).dynamoSection(SECTION).build()
                .loadString(BACKENDS + yaml);
    }

    private static List<String> lines(List<Problem> problems) {
        return problems.stream().map(Problem::toString).toList();
    }

    private static final String ETCD = "discovery: {etcd: {endpoints: [\"http://127.0.0.1:2379\"]";
    private static final String TWO_NS = "dynamo:\n  enabled: true\n  " + ETCD + ", namespaces: [prod, canary]}}\n";

    static Stream<Arguments> rules() {
        String sixtyFive = IntStream.range(0, 65).mapToObj(i -> "b" + i).collect(Collectors.joining(", "));
        String bigMap = IntStream.range(0, 1025).mapToObj(i -> "m" + i + ": x").collect(Collectors.joining(", "));
        return Stream.of(
                Arguments.of("backends not a list", "dynamo: {shim: {backends: fe-a}}",
                        "dynamo.shim.backends: \"fe-a\" (expected: a list of backends[].name entries)"),
                Arguments.of("a duplicate backend", "dynamo: {shim: {backends: [fe-a, fe-a]}}",
                        "dynamo.shim.backends[1]: \"fe-a\" (expected: unique backend names)"),
                Arguments.of("more than 64 backends", "dynamo: {shim: {backends: [" + sixtyFive + "]}}",
                        "dynamo.shim: 65 shim backends (expected: at most 64)"),
                Arguments.of("an unknown backend", "dynamo: {shim: {backends: [fe-x]}}",
                        "dynamo.shim.backends[0]: \"fe-x\" (expected: the name of a configured backend)"),
                Arguments.of("backends and pools together",
                        "dynamo: {shim: {backends: [fe-a], pools: [{namespace: dynamo, backends: [fe-b]}]}}",
                        "dynamo.shim.pools: set together with dynamo.shim.backends (expected: either backends or "
                                + "pools, not both)"),
                Arguments.of("several namespaces with shim.backends",
                        TWO_NS + "  shim: {backends: [fe-a]}\n",
                        "dynamo.shim.backends: set while 2 namespaces are watched (expected: dynamo.shim.pools, one "
                                + "pool per namespace)"),
                Arguments.of("a watched namespace without a pool",
                        TWO_NS + "  shim: {pools: [{namespace: prod, backends: [fe-a]}]}\n",
                        "dynamo.shim.pools: no pool for namespace \"canary\" (expected: exactly one pool per watched "
                                + "namespace)"),
                Arguments.of("two pools for one namespace",
                        TWO_NS + "  shim: {pools: [{namespace: prod, backends: [fe-a]}, {namespace: prod, "
                                + "backends: [fe-b]}]}\n",
                        "dynamo.shim.pools[1].namespace: \"prod\" (expected: exactly one pool per namespace)"),
                Arguments.of("a replica in two pools",
                        TWO_NS + "  shim: {pools: [{namespace: prod, backends: [fe-a]}, {namespace: canary, "
                                + "backends: [fe-a]}]}\n",
                        "dynamo.shim.pools[1].backends: \"fe-a\" (expected: a backend in at most one pool; already "
                                + "in the pool of namespace \"prod\")"),
                Arguments.of("a pool of an unwatched namespace",
                        "dynamo: {shim: {pools: [{namespace: dynamo, backends: [fe-a]}, {namespace: other, "
                                + "backends: [fe-b]}]}}",
                        "dynamo.shim.pools[1].namespace: \"other\" (expected: one of the watched namespaces "
                                + "[dynamo])"),
                Arguments.of("a pool without backends", "dynamo: {shim: {pools: [{namespace: dynamo}]}}",
                        "dynamo.shim.pools[0].backends: missing (expected: at least one backends[].name entry)"),
                Arguments.of("a pool without a namespace", "dynamo: {shim: {pools: [{backends: [fe-a]}]}}",
                        "dynamo.shim.pools[0].namespace: missing (expected: a Dynamo namespace)"),
                Arguments.of("an empty model_map value", "dynamo: {shim: {model_map: {qwen: \"\"}}}",
                        "dynamo.shim.model_map.qwen: \"\" (expected: a non-empty Dynamo model name)"),
                Arguments.of("more than 1024 model_map pairs", "dynamo: {shim: {model_map: {" + bigMap + "}}}",
                        "dynamo.shim.model_map: 1025 entries (expected: at most 1024)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void reportsEachRuleWithItsPath(String rule, String yaml, String error) {
        assertThat(lines(load(yaml).errors())).contains(error);
    }

    @Test
    void bindsBackendsAndModelMap() {
        RouterConfig c = load("dynamo: {shim: {backends: [fe-a, fe-b], model_map: {qwen: Qwen/Qwen3-32B}}}")
                .orThrow();
        ShimConfig shim = c.dynamo().section(SECTION);
        assertThat(shim).isEqualTo(new ShimConfig(List.of("fe-a", "fe-b"), List.of(),
                Map.of("qwen", "Qwen/Qwen3-32B")));
        assertThat(shim.poolsByNamespace(List.of("dynamo"))).isEqualTo(Map.of("dynamo", List.of("fe-a", "fe-b")));
        assertThat(shim.workerModel("qwen")).isEqualTo("Qwen/Qwen3-32B");
        assertThat(shim.workerModel("other")).isEqualTo("other");
    }

    @Test
    void bindsOnePoolPerWatchedNamespace() {
        RouterConfig c = load(TWO_NS + "  shim: {pools: [{namespace: prod, backends: [fe-a]}, "
                + "{namespace: canary, backends: [fe-b]}]}\n").orThrow();
        ShimConfig shim = c.dynamo().section(SECTION);
        assertThat(shim.poolsByNamespace(List.of("prod", "canary")))
                .containsExactly(Map.entry("prod", List.of("fe-a")), Map.entry("canary", List.of("fe-b")));
        assertThat(shim.namespaceOf("fe-b", List.of("prod", "canary"))).isEqualTo("canary");
        assertThat(shim.namespaceOf("fe-c", List.of("prod", "canary"))).isNull();
    }

    @Test
    void defaultsToNoShim() {
        assertThat(load("").orThrow().dynamo().section(SECTION)).isEqualTo(ShimConfig.DEFAULTS);
        assertThat(ShimConfig.DEFAULTS.configured()).isFalse();
    }

    @Test
    void warnsAboutInternalOrDisabledReplicasAndAShimThatPinsNothing() {
        LoadResult r = load("dynamo: {shim: {backends: [fe-c, fe-d]}}");
        assertThat(r.ok()).isTrue();
        assertThat(lines(r.warnings())).contains(
                "dynamo.shim.backends: shim replicas are listed but dynamo.enabled is false (no request is pinned)",
                "dynamo.shim.backends[0]: \"fe-c\" is internal: true (a shim replica is an ordinary enabled backend)",
                "dynamo.shim.backends[1]: \"fe-d\" is enabled: false (a shim replica is an ordinary enabled backend)");
    }

    @Test
    void warnsWithTheFixWhenDynamoIsEnabledButNoRequestCanBePinned() {
        LoadResult r = load("dynamo:\n  enabled: true\n  " + ETCD + "}}\n");

        assertThat(r.ok()).isTrue();
        assertThat(lines(r.warnings())).containsExactly("dynamo.shim.backends: " + ShimSection.NOTHING_PINNED);
        assertThat(ShimSection.NOTHING_PINNED).contains("disaggregated_serving.enabled: true", "backends: [");
        assertThat(lines(load("dynamo:\n  enabled: true\n  " + ETCD + "}}\n  shim: {backends: [fe-a]}\n")
                .warnings())).isEmpty();
        assertThat(lines(load("dynamo:\n  enabled: false\n  " + ETCD + "}}\n").warnings()))
                .noneMatch(line -> line.startsWith("dynamo.shim"));
    }

    @Test
    void everyChangeAppliesImmediately() {
        assertThat(SECTION.reloadClass(ShimConfig.DEFAULTS, new ShimConfig(List.of("fe-a"), List.of(), Map.of())))
                .isEqualTo(ReloadClass.IMMEDIATE);
    }

    @Test
    void rendersWithYamlKeysThatLoadBackToAnEqualValue() {
        String yaml = TWO_NS + "  shim: {pools: [{namespace: prod, backends: [fe-a]}, "
                + "{namespace: canary, backends: [fe-b]}], model_map: {qwen: Qwen/Qwen3-32B}}\n";
        RouterConfig c = load(yaml).orThrow();
        Map<String, Object> tree = ConfigRenderer.get().tree(c);
        @SuppressWarnings("unchecked")
        Map<String, Object> rendered = (Map<String, Object>) ((Map<String, Object>) tree.get("dynamo")).get("shim");
        assertThat(rendered).isEqualTo(Map.of(
                "pools", List.of(Map.of("namespace", "prod", "backends", List.of("fe-a")),
                        Map.of("namespace", "canary", "backends", List.of("fe-b"))),
                "model_map", Map.of("qwen", "Qwen/Qwen3-32B")));
    }
}
