package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.agents.KvListenerConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/kubernetes/kv-listener rendered by the real kustomize: no RBAC and no API token (it never talks to the
 * Kubernetes API), the {@code kv-listener} command, a config the kv-listener accepts, and the token and router
 * CA mounted where that config reads them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvListenerKustomizeTest {
    private static final Path DIR = DeployFiles.repositoryRoot().resolve("deploy/kubernetes/kv-listener");

    @TempDir
    Path tmp;

    @Test
    void rendersAKvListenerWithoutApiAccessWhoseConfigIsValidAndWired() throws Exception {
        List<Map<String, Object>> docs = DeployFiles.kustomize(DIR);
        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder(
                "ServiceAccount", "ConfigMap", "Deployment");

        Map<String, Object> pod = at(only(docs, "Deployment"), "spec", "template", "spec");
        assertThat((Boolean) at(pod, "automountServiceAccountToken")).isFalse();
        Map<String, Object> container = at(pod, "containers", 0);
        assertThat(DeployFiles.<List<String>>at(container, "args")).containsExactly("kv-listener", "--config",
                "/etc/continuum-kv-listener/config.yaml");
        assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();

        String config = at(only(docs, "ConfigMap"), "data", "config.yaml");
        Path file = DeployFiles.agentConfigAsMounted(pod, config, "continuum-kv-listener-token", tmp);
        KvListenerConfig.Result loaded = KvListenerConfig.load(file, Map.of());
        assertThat(loaded.problems()).isEmpty();
        assertThat(loaded.config()).isNotNull();
        assertThat(loaded.config().sources()).containsOnlyKeys("vllm-1");
    }
}
