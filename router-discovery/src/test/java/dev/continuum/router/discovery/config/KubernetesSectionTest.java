package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigRenderer;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.config.KubernetesConfig.ModelMapping;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import static org.assertj.core.api.Assertions.assertThat;

/** Every rule of {@code dynamo.discovery.kubernetes}, through core's loader, as the router loads it. */
@Timeout(30)
class KubernetesSectionTest {
    private static final DiscoverySection SECTION = DiscoverySection.create(Map.of());

    private static LoadResult load(String discoveryYaml) {
        return ConfigLoader.builder().environment(Map.of()).dynamoSection(SECTION).build()
                .loadString("backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\ndynamo:\n  enabled: false\n"
                        + "  discovery:\n" + discoveryYaml.indent(4));
    }

    private static List<String> lines(List<Problem> problems) {
        return problems.stream().map(Problem::toString).filter(l -> l.startsWith("dynamo.discovery"))
                .collect(Collectors.toList());
    }

    private static KubernetesConfig bound(String yaml) {
        LoadResult result = load(yaml);
        assertThat(lines(result.errors())).isEmpty();
        return result.orThrow().dynamo().section(SECTION).kubernetes();
    }

    @Test
    void theSeedsPodExampleBinds() {
        LoadResult result = load("""
                source: kubernetes_pods
                kubernetes:
                  namespace: "dynamo"
                  dynamo_namespace: "dynamo-solar-pro4"
                  model: "solar-pro4"
                  watch_reconnect_backoff:
                    initial: "500ms"
                    max: "30s"
                """);
        assertThat(lines(result.errors())).isEmpty();
        DiscoveryConfig config = result.orThrow().dynamo().section(SECTION);
        assertThat(config.source()).isEqualTo(DiscoverySourceKind.KUBERNETES_PODS);
        assertThat(config.kubernetes()).isEqualTo(new KubernetesConfig("dynamo", "dynamo-solar-pro4", List.of(),
                "solar-pro4", List.of(), BackoffConfig.defaults()));
        assertThat(config.namespaces()).containsExactly("dynamo-solar-pro4");
        assertThat(lines(result.warnings())).singleElement().asString().startsWith("dynamo.discovery.source: Pods "
                + "carry no model cards");
    }

    @Test
    void theSeedsMultiModelExampleBindsAndMapsByExactComponent() {
        KubernetesConfig config = bound("""
                source: kubernetes_pods
                kubernetes:
                  namespace: "kbm-g-np-kt-a"
                  dynamo_namespace: "kbm-g-np-kt-a-solar-pro4-4tp-agg"
                  models:
                    - component: VllmWorker-decodeheavy
                      model: solar-pro4
                    - component: VllmWorker-prefillheavy
                      model: solar-pro4-longcontext
                """);
        assertThat(config.models()).containsExactly(
                new ModelMapping(null, "VllmWorker-decodeheavy", "solar-pro4"),
                new ModelMapping(null, "VllmWorker-prefillheavy", "solar-pro4-longcontext"));
        String ns = "kbm-g-np-kt-a-solar-pro4-4tp-agg";
        assertThat(config.modelFor(ns, "VllmWorker-prefillheavy")).isEqualTo("solar-pro4-longcontext");
        assertThat(config.modelFor(ns, "vllmworker-prefillheavy")).isNull();
        assertThat(config.modelFor(ns, null)).isNull();
    }

    @Test
    void theMetadataSourceIgnoresModelsWithAWarning() {
        LoadResult result = load("source: kubernetes\nkubernetes: {namespace: dynamo, model: m}");
        assertThat(lines(result.errors())).isEmpty();
        assertThat(lines(result.warnings())).containsExactly("dynamo.discovery.kubernetes.model: ignored under "
                + "source: kubernetes (each worker's model comes from its model card)");
        assertThat(result.orThrow().dynamo().section(SECTION).kubernetes().model()).isNull();
    }

    @Test
    void severalDynamoNamespacesNeedTheNamespaceInEveryModelsEntry() {
        KubernetesConfig config = bound("""
                source: kubernetes_pods
                kubernetes:
                  namespace: dynamo
                  dynamo_namespaces: [a, b]
                  models:
                    - {dynamo_namespace: a, component: w, model: m1}
                    - {dynamo_namespace: b, component: w, model: m2}
                """);
        assertThat(config.effectiveDynamoNamespaces()).containsExactly("a", "b");
        assertThat(config.modelFor("a", "w")).isEqualTo("m1");
        assertThat(config.modelFor("b", "w")).isEqualTo("m2");
    }

    static Stream<Arguments> invalid() {
        String pods = "source: kubernetes_pods\nkubernetes:\n";
        String manyModels = IntStream.range(0, 257).mapToObj(i -> "    - {component: c" + i + ", model: m}")
                .collect(Collectors.joining("\n"));
        return Stream.of(
                Arguments.of("namespace required", pods + "  model: m",
                        "dynamo.discovery.kubernetes.namespace: missing (expected: the fleet's Kubernetes namespace, "
                                + "a DNS-1123 label)"),
                Arguments.of("namespace upper case", pods + "  namespace: Dynamo\n  model: m",
                        "dynamo.discovery.kubernetes.namespace: \"Dynamo\" (expected: a DNS-1123 label: 1 to 63 "
                                + "lowercase letters, digits or '-', starting and ending with a letter or digit)"),
                Arguments.of("namespace trailing dash", pods + "  namespace: dyn-\n  model: m",
                        "dynamo.discovery.kubernetes.namespace: \"dyn-\" (expected: a DNS-1123 label: 1 to 63 "
                                + "lowercase letters, digits or '-', starting and ending with a letter or digit)"),
                Arguments.of("namespace 64 chars", pods + "  namespace: " + "a".repeat(64) + "\n  model: m",
                        "dynamo.discovery.kubernetes.namespace: \"" + "a".repeat(64) + "\" (expected: a DNS-1123 "
                                + "label: 1 to 63 lowercase letters, digits or '-', starting and ending with a letter "
                                + "or digit)"),
                Arguments.of("dynamo_namespace empty", pods + "  namespace: d\n  dynamo_namespace: ''\n  model: m",
                        "dynamo.discovery.kubernetes.dynamo_namespace: \"\" (expected: " + KubernetesBinder.LABEL_VALUE_RULE
                                + ")"),
                Arguments.of("dynamo_namespace with slash", pods + "  namespace: d\n  dynamo_namespace: a/b\n  model: m",
                        "dynamo.discovery.kubernetes.dynamo_namespace: \"a/b\" (expected: "
                                + KubernetesBinder.LABEL_VALUE_RULE + ")"),
                Arguments.of("both namespace forms", pods + "  namespace: d\n  dynamo_namespace: x\n"
                                + "  dynamo_namespaces: [a, b]\n  model: m",
                        "dynamo.discovery.kubernetes.dynamo_namespace: \"x\" (expected: either dynamo_namespace or "
                                + "dynamo_namespaces, not both (a non-default dynamo_namespace excludes the list))"),
                Arguments.of("duplicate dynamo_namespaces", pods + "  namespace: d\n  dynamo_namespaces: [a, a]\n  model: m",
                        "dynamo.discovery.kubernetes.dynamo_namespaces[1]: \"a\" (expected: unique namespaces)"),
                Arguments.of("neither model nor models", pods + "  namespace: d",
                        "dynamo.discovery.kubernetes.model: missing (expected: exactly one of model or models with "
                                + "source: kubernetes_pods)"),
                Arguments.of("model and models", pods + "  namespace: d\n  model: m\n  models: [{component: c, model: m}]",
                        "dynamo.discovery.kubernetes.models: set together with model (expected: exactly one of model "
                                + "or models)"),
                Arguments.of("model with whitespace", pods + "  namespace: d\n  model: 'solar pro'",
                        "dynamo.discovery.kubernetes.model: \"solar pro\" (expected: a non-empty model name without "
                                + "whitespace)"),
                Arguments.of("model empty", pods + "  namespace: d\n  model: ''",
                        "dynamo.discovery.kubernetes.model: \"\" (expected: a non-empty model name without whitespace)"),
                Arguments.of("models empty", pods + "  namespace: d\n  models: []",
                        "dynamo.discovery.kubernetes.models: empty (expected: 1 to 256 entries)"),
                Arguments.of("models over 256", pods + "  namespace: d\n  models:\n" + manyModels,
                        "dynamo.discovery.kubernetes.models: 257 entries (expected: at most 256)"),
                Arguments.of("duplicate component", pods + "  namespace: d\n  models: [{component: c, model: a}, "
                                + "{component: c, model: b}]",
                        "dynamo.discovery.kubernetes.models[1].component: \"c\" (expected: unique components)"),
                Arguments.of("entry without component", pods + "  namespace: d\n  models: [{model: a}]",
                        "dynamo.discovery.kubernetes.models[0].component: missing (expected: an "
                                + "nvidia.com/dynamo-component label value)"),
                Arguments.of("entry without model", pods + "  namespace: d\n  models: [{component: c}]",
                        "dynamo.discovery.kubernetes.models[0].model: missing (expected: a non-empty model name "
                                + "without whitespace)"),
                Arguments.of("entry not a map", pods + "  namespace: d\n  models: [c]",
                        "dynamo.discovery.kubernetes.models[0]: \"c\" (expected: a map with component and model)"),
                Arguments.of("several namespaces, entry without one", pods + "  namespace: d\n"
                                + "  dynamo_namespaces: [a, b]\n  models: [{component: c, model: m}]",
                        "dynamo.discovery.kubernetes.models[0].dynamo_namespace: missing (expected: one of "
                                + "dynamo_namespaces [a, b] when several are watched)"),
                Arguments.of("entry namespace not watched", pods + "  namespace: d\n"
                                + "  dynamo_namespaces: [a, b]\n  models: [{dynamo_namespace: z, component: c, model: m}]",
                        "dynamo.discovery.kubernetes.models[0].dynamo_namespace: \"z\" (expected: one of the watched "
                                + "Dynamo namespaces [a, b])"),
                Arguments.of("backoff max below initial", pods + "  namespace: d\n  model: m\n"
                                + "  watch_reconnect_backoff: {initial: 2s, max: 1s}",
                        "dynamo.discovery.kubernetes.watch_reconnect_backoff.max: 1000 ms is below initial (2000 ms) "
                                + "(expected: max >= initial)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void refuses(String description, String yaml, String problem) {
        assertThat(lines(load(yaml).errors())).containsExactly(problem);
    }

    @Test
    void theReadbackRendersTheSection() {
        LoadResult result = load("source: kubernetes_pods\nkubernetes: {namespace: d, models: [{component: c, "
                + "model: m}], watch_reconnect_backoff: {initial: 1s, max: 10s}}");
        DiscoveryConfig config = result.orThrow().dynamo().section(SECTION);
        assertThat(config.backoff()).isEqualTo(new BackoffConfig(Duration.ofSeconds(1), Duration.ofSeconds(10)));
        assertThat(ConfigRenderer.get().tree(result.orThrow()).toString()).contains("kubernetes={namespace=d, "
                + "dynamo_namespace=dynamo, models=[{component=c, model=m}], "
                + "watch_reconnect_backoff={initial=1s, max=10s}}");
    }
}
