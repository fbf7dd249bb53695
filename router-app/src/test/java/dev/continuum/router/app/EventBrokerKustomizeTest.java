package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.eventbus.EventBrokerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
        Process p = new ProcessBuilder("kubectl", "kustomize", DIR.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        List<Map<String, Object>> docs = DeployFiles.documents(out);
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
        List<Map<String, Object>> mounts = at(container, "volumeMounts");
        Map<String, String> mountByVolume = new java.util.HashMap<>();
        mounts.forEach(m -> mountByVolume.put((String) m.get("name"), (String) m.get("mountPath")));
        Map<String, Object> bus = at(DeployFiles.yamlMap(config), "bus");
        String tokenFile = (String) bus.get("token_file");
        String caFile = at(bus, "tls", "ca");
        assertThat(Path.of(tokenFile).getParent()).hasToString(mountByVolume.get("token"));
        assertThat(Path.of(caFile).getParent()).hasToString(mountByVolume.get("router-ca"));
        assertThat((String) at(pod, "volumes", 2, "secret", "secretName")).isEqualTo("continuum-event-broker-token");

        Path token = Files.writeString(tmp.resolve("token"), "t0ken-for-the-test");
        Path ca = Files.writeString(tmp.resolve("ca.crt"), "placeholder");
        Path file = Files.writeString(tmp.resolve("config.yaml"),
                config.replace(tokenFile, token.toString()).replace(caFile, ca.toString()));
        EventBrokerConfig.Result loaded = EventBrokerConfig.load(file, Map.of());
        assertThat(loaded.problems()).isEmpty();
        assertThat(loaded.config()).isNotNull();
        assertThat(loaded.config().agent().namespaces()).containsExactly("dynamo");
        assertThat(at(deployment, "metadata", "namespace").toString()).isEqualTo(
                loaded.config().discovery().kubernetes().namespace());
    }
}
