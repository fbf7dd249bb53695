package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.agents.EventBrokerConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/kubernetes/event-broker rendered by the real kustomize: least-privilege RBAC (get, list and watch on
 * DynamoWorkerMetadata and EndpointSlices, nothing else) bound to the Pod's own ServiceAccount, the
 * {@code event-broker} command, a config the broker accepts, and the token and router CA mounted where that
 * config reads them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventBrokerKustomizeTest {
    private static final Path DIR = DeployFiles.repositoryRoot().resolve("deploy/kubernetes/event-broker");

    @TempDir
    Path tmp;

    @Test
    void rendersALeastPrivilegeBrokerWhoseConfigIsValidAndWired() throws Exception {
        List<Map<String, Object>> docs = DeployFiles.kustomize(DIR);
        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder(
                "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment");

        List<Map<String, Object>> rules = at(only(docs, "Role"), "rules");
        assertThat(rules).hasSize(2).allSatisfy(rule -> assertThat(DeployFiles.<List<String>>at(rule, "verbs"))
                .containsExactlyInAnyOrder("get", "list", "watch"));
        assertThat(rules).extracting(r -> r.get("resources"))
                .containsExactlyInAnyOrder(List.of("dynamoworkermetadatas"), List.of("endpointslices"));

        Map<String, Object> deployment = only(docs, "Deployment");
        Map<String, Object> pod = at(deployment, "spec", "template", "spec");
        String account = at(pod, "serviceAccountName");
        Map<String, Object> binding = only(docs, "RoleBinding");
        assertThat((String) at(binding, "subjects", 0, "name")).isEqualTo(account);
        assertThat((String) at(binding, "roleRef", "name")).isEqualTo(at(only(docs, "Role"), "metadata", "name"));
        Map<String, Object> container = at(pod, "containers", 0);
        assertThat(DeployFiles.<List<String>>at(container, "args")).containsExactly("event-broker", "--config",
                "/etc/continuum-event-broker/config.yaml");
        assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();

        // The config as the broker reads it, with the token and CA where the Pod mounts them.
        String config = at(only(docs, "ConfigMap"), "data", "config.yaml");
        Path file = DeployFiles.agentConfigAsMounted(pod, config, "continuum-event-broker-token", tmp);
        EventBrokerConfig.Result loaded = EventBrokerConfig.load(file, Map.of());
        assertThat(loaded.problems()).isEmpty();
        assertThat(loaded.config()).isNotNull();
        assertThat(loaded.config().agent().namespaces()).containsExactly("dynamo");
        assertThat(at(deployment, "metadata", "namespace").toString()).isEqualTo(
                loaded.config().discovery().kubernetes().namespace());
    }
}
