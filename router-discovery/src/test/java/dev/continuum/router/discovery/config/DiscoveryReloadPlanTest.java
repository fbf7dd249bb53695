package dev.continuum.router.discovery.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.Secret;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.config.DiscoveryReloadPlan.Action;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(10)
class DiscoveryReloadPlanTest {
    private static final EtcdConfig ETCD = EtcdConfig.defaults().withEndpoints(List.of("http://etcd-0:2379"));
    private static final DiscoveryConfig BASE = DiscoveryConfig.etcd(ETCD);
    private static final DiscoveryConfig MULTI = DiscoveryConfig.etcd(ETCD.withNamespaces("dynamo", List.of("prod", "canary")));

    private static Arguments change(String description, DiscoveryConfig before, UnaryOperator<EtcdConfig> edit,
                                    Action action, RestartReason reason) {
        return Arguments.of(description, before, DiscoveryConfig.etcd(edit.apply(before.etcd())), action, reason);
    }

    static Stream<Arguments> etcdChanges() {
        return Stream.of(
                change("nothing", BASE, e -> e, Action.NOTHING, null),
                change("endpoints", BASE, e -> e.withEndpoints(List.of("http://etcd-1:2379")), Action.REPLACE_RESETTING,
                        RestartReason.CONNECTION),
                change("tls added", BASE, e -> e.withEndpoints(List.of("https://etcd-0:2379"))
                        .withTls(new EtcdTlsConfig(Path.of("/ca.pem"), null, null, null)), Action.REPLACE_RESETTING,
                        RestartReason.CONNECTION),
                change("auth", BASE, e -> e.withAuth(new EtcdAuthConfig("router", Secret.of("pw"))),
                        Action.REPLACE_RESETTING, RestartReason.CONNECTION),
                change("password only", DiscoveryConfig.etcd(ETCD.withAuth(new EtcdAuthConfig("router", Secret.of("a")))),
                        e -> e.withAuth(new EtcdAuthConfig("router", Secret.of("b"))), Action.REPLACE_RESETTING,
                        RestartReason.CONNECTION),
                change("scalar namespace", BASE, e -> e.withNamespaces("prod", List.of()), Action.REPLACE_RESETTING,
                        RestartReason.NAMESPACE),
                change("namespace list grows", MULTI, e -> e.withNamespaces("dynamo", List.of("prod", "canary", "dev")),
                        Action.REPLACE_PRUNING, RestartReason.NAMESPACES),
                change("namespace list shrinks", MULTI, e -> e.withNamespaces("dynamo", List.of("prod")),
                        Action.REPLACE_PRUNING, RestartReason.NAMESPACES),
                change("scalar default to a list keeping it", BASE,
                        e -> e.withNamespaces("dynamo", List.of("dynamo", "canary")), Action.REPLACE_PRUNING,
                        RestartReason.NAMESPACES),
                change("list replaced entirely", MULTI, e -> e.withNamespaces("dynamo", List.of("dev")),
                        Action.REPLACE_RESETTING, RestartReason.NAMESPACE),
                change("list reordered", MULTI, e -> e.withNamespaces("dynamo", List.of("canary", "prod")),
                        Action.REPLACE_PRUNING, RestartReason.NAMESPACES),
                change("backoff only", BASE, e -> e.withBackoff(new BackoffConfig(Duration.ofSeconds(1), Duration.ofMinutes(1))),
                        Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.BACKOFF),
                change("connection wins over backoff", BASE, e -> e.withEndpoints(List.of("http://x:1"))
                        .withBackoff(new BackoffConfig(Duration.ofSeconds(1), Duration.ofMinutes(1))),
                        Action.REPLACE_RESETTING, RestartReason.CONNECTION),
                change("namespace wins over backoff", BASE, e -> e.withNamespaces("prod", List.of())
                        .withBackoff(new BackoffConfig(Duration.ofSeconds(1), Duration.ofMinutes(1))),
                        Action.REPLACE_RESETTING, RestartReason.NAMESPACE));
    }

    @ParameterizedTest(name = "{0}: {3} ({4})")
    @MethodSource("etcdChanges")
    void etcdChangesReplaceTheWatcherOnlyAsFarAsNeeded(String description, DiscoveryConfig before,
                                                       DiscoveryConfig after, Action action, RestartReason reason) {
        assertThat(DiscoveryReloadPlan.of(true, before, true, after)).isEqualTo(new DiscoveryReloadPlan(action, reason));
    }

    @Test
    void switchingOnStartsWithReasonEnabledAndSwitchingOffStops() {
        assertThat(DiscoveryReloadPlan.of(false, BASE, true, BASE)).isEqualTo(new DiscoveryReloadPlan(Action.REPLACE_RESETTING,
                RestartReason.ENABLED));
        assertThat(DiscoveryReloadPlan.of(true, BASE, false, BASE)).isEqualTo(new DiscoveryReloadPlan(Action.STOP, null));
        assertThat(DiscoveryReloadPlan.of(false, BASE, false, MULTI)).isEqualTo(new DiscoveryReloadPlan(Action.NOTHING, null));
    }

    @Test
    void switchingTheSourceResets() {
        DiscoveryConfig file = DiscoveryConfig.file(FileStoreConfig.defaults(java.util.Map.of()));
        assertThat(DiscoveryReloadPlan.of(true, BASE, true, file)).isEqualTo(new DiscoveryReloadPlan(Action.REPLACE_RESETTING,
                RestartReason.SOURCE));
    }

    @Test
    void fileStoreChanges() {
        FileStoreConfig f = new FileStoreConfig(Path.of("/kv"), "dynamo", List.of(), Duration.ofSeconds(10),
                Duration.ofSeconds(1));
        DiscoveryConfig before = DiscoveryConfig.file(f);
        assertThat(DiscoveryReloadPlan.of(true, before, true, DiscoveryConfig.file(new FileStoreConfig(Path.of("/other"),
                "dynamo", List.of(), f.ttl(), f.rescanInterval())))).isEqualTo(new DiscoveryReloadPlan(Action.REPLACE_RESETTING,
                RestartReason.CONNECTION));
        assertThat(DiscoveryReloadPlan.of(true, before, true, DiscoveryConfig.file(new FileStoreConfig(f.root(), "dynamo",
                List.of(), Duration.ofSeconds(20), f.rescanInterval())))).isEqualTo(new DiscoveryReloadPlan(
                Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.OTHER));
        assertThat(DiscoveryReloadPlan.of(true, before, true, DiscoveryConfig.file(new FileStoreConfig(f.root(), "prod",
                List.of(), f.ttl(), f.rescanInterval())))).isEqualTo(new DiscoveryReloadPlan(Action.REPLACE_RESETTING,
                RestartReason.NAMESPACE));
        // While the file store is active, edits of the etcd section change nothing.
        DiscoveryConfig etcdEdited = new DiscoveryConfig(before.source(), ETCD.withEndpoints(List.of("http://z:1")), f);
        assertThat(DiscoveryReloadPlan.of(true, before, true, etcdEdited)).isEqualTo(new DiscoveryReloadPlan(Action.NOTHING, null));
    }

    private static final KubernetesConfig PODS = new KubernetesConfig("dynamo", "dynamo", List.of("a", "b"), null,
            List.of(new KubernetesConfig.ModelMapping("a", "w", "m1"), new KubernetesConfig.ModelMapping("b", "w", "m2")),
            BackoffConfig.defaults());

    private static Arguments k8s(String description, DiscoverySourceKind kind, UnaryOperator<KubernetesConfig> edit,
                                 Action action, RestartReason reason) {
        return Arguments.of(description, DiscoveryConfig.kubernetes(kind, PODS),
                DiscoveryConfig.kubernetes(kind, edit.apply(PODS)), action, reason);
    }

    static Stream<Arguments> kubernetesChanges() {
        DiscoverySourceKind pods = DiscoverySourceKind.KUBERNETES_PODS;
        DiscoverySourceKind metadata = DiscoverySourceKind.KUBERNETES;
        return Stream.of(
                k8s("nothing", pods, k -> k, Action.NOTHING, null),
                k8s("kubernetes namespace", pods, k -> k.withNamespace("other"), Action.REPLACE_RESETTING,
                        RestartReason.NAMESPACE),
                k8s("scalar dynamo_namespace", pods, k -> k.withDynamoNamespaces("c", List.of()).withModel("m", List.of()),
                        Action.REPLACE_RESETTING, RestartReason.NAMESPACE),
                k8s("dynamo_namespaces shrink, kept models unchanged", pods, k -> k.withDynamoNamespaces("dynamo",
                        List.of("a")), Action.REPLACE_PRUNING, RestartReason.NAMESPACES),
                k8s("dynamo_namespaces grow with a mapping for the new one", pods, k -> k.withDynamoNamespaces("dynamo",
                        List.of("a", "b", "c")).withModel(null, List.of(k.models().get(0), k.models().get(1),
                        new KubernetesConfig.ModelMapping("c", "w", "m3"))), Action.REPLACE_PRUNING, RestartReason.NAMESPACES),
                k8s("a kept namespace's model changes", pods, k -> k.withDynamoNamespaces("dynamo", List.of("a"))
                        .withModel(null, List.of(new KubernetesConfig.ModelMapping("a", "w", "other"))),
                        Action.REPLACE_RESETTING, RestartReason.OTHER),
                k8s("models edited", pods, k -> k.withModel("single", List.of()), Action.REPLACE_RESETTING,
                        RestartReason.OTHER),
                k8s("backoff", pods, k -> k.withBackoff(new BackoffConfig(Duration.ofSeconds(1), Duration.ofMinutes(1))),
                        Action.REPLACE_KEEPING_SNAPSHOT, RestartReason.BACKOFF),
                k8s("metadata source: models are not even bound", metadata, k -> k, Action.NOTHING, null),
                k8s("metadata source: models edited in code", metadata, k -> k.withModel("x", List.of()),
                        Action.NOTHING, null),
                k8s("metadata source: namespace", metadata, k -> k.withNamespace("x"), Action.REPLACE_RESETTING,
                        RestartReason.NAMESPACE));
    }

    @ParameterizedTest(name = "{0}: {3} ({4})")
    @MethodSource("kubernetesChanges")
    void kubernetesChangesFollowTheSeedsReasons(String description, DiscoveryConfig before, DiscoveryConfig after,
                                                Action action, RestartReason reason) {
        assertThat(DiscoveryReloadPlan.of(true, before, true, after)).isEqualTo(new DiscoveryReloadPlan(action, reason));
    }

    @Test
    void switchingBetweenTheKubernetesSourcesResetsWithReasonSource() {
        assertThat(DiscoveryReloadPlan.of(true, DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES_PODS, PODS), true,
                DiscoveryConfig.kubernetes(DiscoverySourceKind.KUBERNETES, PODS))).isEqualTo(new DiscoveryReloadPlan(
                Action.REPLACE_RESETTING, RestartReason.SOURCE));
    }
}
