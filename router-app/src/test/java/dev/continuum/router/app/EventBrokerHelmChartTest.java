package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import dev.continuum.router.agents.EventBrokerConfig;
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

/**
 * deploy/helm/continuum-event-broker rendered and linted by the real helm (helm-java), as HelmChartTest does for
 * the router's chart: two brokers (one Deployment and credential each), least-privilege RBAC in the release's
 * namespace only, a PodDisruptionBudget over both, each broker's config accepted by the broker with its
 * credential and the router's CA mounted where it reads them, and the client-certificate variant.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventBrokerHelmChartTest {
    private final Path chart = DeployFiles.repositoryRoot().resolve("deploy/helm/continuum-event-broker");

    @TempDir
    Path tmp;

    private List<Map<String, Object>> render(Path... values) throws IOException {
        var template = new Helm(chart).template().withName("bus").withNamespace("dynamo-workers");
        for (Path v : values) {
            template = template.withValuesFile(v);
        }
        return DeployFiles.documents(template.call());
    }

    @Test
    void lintsCleanInStrictMode() {
        LintResult lint = new Helm(chart).lint().strict().call();

        assertThat(lint.isFailed()).as(lint.getMessages().toString()).isFalse();
        assertThat(lint.getMessages()).allMatch(m -> m.startsWith("[INFO]"));
    }

    @Test
    void theDefaultsRenderTwoLeastPrivilegeBrokersWhoseConfigsAreValidAndWired() throws IOException {
        List<Map<String, Object>> docs = render();

        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder("ServiceAccount", "Role",
                "RoleBinding", "ConfigMap", "ConfigMap", "Deployment", "Deployment", "PodDisruptionBudget");
        Map<String, Object> role = only(docs, "Role");
        assertThat((String) at(role, "metadata", "namespace")).isEqualTo("dynamo-workers");
        List<Map<String, Object>> rules = at(role, "rules");
        assertThat(rules).hasSize(2).allSatisfy(rule -> assertThat(DeployFiles.<List<String>>at(rule, "verbs"))
                .containsExactlyInAnyOrder("get", "list", "watch"));
        assertThat(rules).extracting(r -> r.get("resources"))
                .containsExactlyInAnyOrder(List.of("dynamoworkermetadatas"), List.of("endpointslices"));
        Map<String, Object> binding = only(docs, "RoleBinding");
        String account = at(only(docs, "ServiceAccount"), "metadata", "name");
        assertThat((String) at(binding, "subjects", 0, "name")).isEqualTo(account);
        assertThat((String) at(binding, "roleRef", "name")).isEqualTo(at(role, "metadata", "name"));

        List<Map<String, Object>> deployments = docs.stream().filter(d -> "Deployment".equals(d.get("kind"))).toList();
        Map<String, Object> pdbSelector = at(only(docs, "PodDisruptionBudget"), "spec", "selector", "matchLabels");
        List<String> clientIds = new java.util.ArrayList<>();
        for (Map<String, Object> deployment : deployments) {
            assertThat((int) at(deployment, "spec", "replicas")).isEqualTo(1);
            Map<String, Object> pod = at(deployment, "spec", "template", "spec");
            assertThat((String) at(pod, "serviceAccountName")).isEqualTo(account);
            assertThat(DeployFiles.<Map<String, Object>>at(deployment, "spec", "template", "metadata", "labels"))
                    .containsAllEntriesOf(pdbSelector);
            Map<String, Object> container = at(pod, "containers", 0);
            assertThat(DeployFiles.<List<String>>at(container, "args")).containsExactly("event-broker", "--config",
                    "/etc/continuum-event-broker/config.yaml");
            assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();
            assertThat((Boolean) at(pod, "securityContext", "runAsNonRoot")).isTrue();
            assertThat((Map<String, Object>) at(container, "resources", "limits")).containsKey("memory");
            EventBrokerConfig config = load(docs, pod, container);
            clientIds.add(config.agent().clientId());
            assertThat(config.agent().namespaces()).containsExactly("dynamo");
            assertThat(config.discovery().kubernetes().namespace()).isEqualTo("dynamo-workers");
        }
        assertThat(clientIds).containsExactlyInAnyOrder("broker-a", "broker-b");
    }

    @Test
    void aBrokerWithAClientCertificateMountsItAndHasNoTokenFile() throws IOException {
        List<Map<String, Object>> docs = render(chart.resolve("ci/all-features-values.yaml"));

        Map<String, Object> deployment = docs.stream().filter(d -> "Deployment".equals(d.get("kind"))
                && at(d, "metadata", "name").toString().endsWith("broker-b")).findFirst().orElseThrow();
        Map<String, Object> pod = at(deployment, "spec", "template", "spec");
        Map<String, Object> container = at(pod, "containers", 0);
        EventBrokerConfig config = load(docs, pod, container);
        assertThat(config.agent().clientId()).isEqualTo("broker-b");
        assertThat(config.agent().namespaces()).containsExactly("dynamo", "batch");
        assertThat((String) at(pod, "volumes", 1, "secret", "secretName")).isEqualTo("broker-b-cert");
        assertThat((String) at(container, "image")).isEqualTo("registry.example/continuum-router:0.1.1");
        assertThat((int) at(pod, "terminationGracePeriodSeconds")).isEqualTo(40);
    }

    /**
     * The broker's config from the ConfigMap the Pod mounts, loaded by the broker with every file it names
     * replaced by a scratch file, after checking that each named file lies under one of the Pod's mounts.
     */
    private EventBrokerConfig load(List<Map<String, Object>> docs, Map<String, Object> pod,
                                   Map<String, Object> container) throws IOException {
        String configMapName = at(pod, "volumes", 0, "configMap", "name");
        Map<String, Object> configMap = docs.stream().filter(d -> "ConfigMap".equals(d.get("kind"))
                && configMapName.equals(at(d, "metadata", "name"))).findFirst().orElseThrow();
        String text = at(configMap, "data", "config.yaml");
        Map<String, String> mounts = new HashMap<>();
        for (Map<String, Object> m : DeployFiles.<List<Map<String, Object>>>at(container, "volumeMounts")) {
            mounts.put((String) m.get("mountPath"), (String) m.get("name"));
        }
        assertThat(mounts).containsEntry("/etc/continuum-event-broker", "config");
        Map<String, Object> bus = at(DeployFiles.yamlMap(text), "bus");
        List<String> files = new java.util.ArrayList<>();
        if (bus.get("token_file") != null) {
            files.add((String) bus.get("token_file"));
        }
        if (bus.get("tls") instanceof Map<?, ?> tls) {
            tls.values().forEach(v -> files.add((String) v));
        }
        assertThat(files).isNotEmpty();
        String loaded = text;
        for (String f : files) {
            Path p = Path.of(f);
            assertThat(mounts).as(f + " is mounted").containsKey(p.getParent().toString());
            Path scratch = Files.writeString(tmp.resolve(p.getFileName().toString()),
                    p.getFileName().toString().equals("token") ? "t0ken-for-the-test" : "placeholder");
            loaded = loaded.replace(f, scratch.toString());
        }
        Path file = Files.writeString(tmp.resolve("config-" + configMapName + ".yaml"), loaded);
        EventBrokerConfig.Result result = EventBrokerConfig.load(file, Map.of());
        assertThat(result.problems()).isEmpty();
        return result.config();
    }
}
