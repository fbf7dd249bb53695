package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.eventbus.KvListenerConfig;
import java.nio.charset.StandardCharsets;
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
        Process p = new ProcessBuilder("kubectl", "kustomize", DIR.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        List<Map<String, Object>> docs = DeployFiles.documents(out);
        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder(
                "ServiceAccount", "ConfigMap", "Deployment");

        Map<String, Object> pod = at(only(docs, "Deployment"), "spec", "template", "spec");
        assertThat((Boolean) at(pod, "automountServiceAccountToken")).isFalse();
        Map<String, Object> container = at(pod, "containers", 0);
        assertThat(DeployFiles.<List<String>>at(container, "args")).containsExactly("kv-listener", "--config",
                "/etc/continuum-kv-listener/config.yaml");
        assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();

        String config = at(only(docs, "ConfigMap"), "data", "config.yaml");
        List<Map<String, Object>> mounts = at(container, "volumeMounts");
        Map<String, String> mountByVolume = new HashMap<>();
        mounts.forEach(m -> mountByVolume.put((String) m.get("name"), (String) m.get("mountPath")));
        Map<String, Object> bus = at(DeployFiles.yamlMap(config), "bus");
        String tokenFile = (String) bus.get("token_file");
        String caFile = at(bus, "tls", "ca");
        assertThat(Path.of(tokenFile).getParent()).hasToString(mountByVolume.get("token"));
        assertThat(Path.of(caFile).getParent()).hasToString(mountByVolume.get("router-ca"));
        assertThat((String) at(pod, "volumes", 2, "secret", "secretName")).isEqualTo("continuum-kv-listener-token");

        Path token = Files.writeString(tmp.resolve("token"), "t0ken-for-the-test");
        Path ca = Files.writeString(tmp.resolve("ca.crt"), "placeholder");
        Path file = Files.writeString(tmp.resolve("config.yaml"),
                config.replace(tokenFile, token.toString()).replace(caFile, ca.toString()));
        KvListenerConfig.Result loaded = KvListenerConfig.load(file, Map.of());
        assertThat(loaded.problems()).isEmpty();
        assertThat(loaded.config()).isNotNull();
        assertThat(loaded.config().sources()).containsOnlyKeys("vllm-1");
    }
}
