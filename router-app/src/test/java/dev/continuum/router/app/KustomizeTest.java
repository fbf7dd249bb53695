package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.LoadResult;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * deploy/kubernetes rendered by the real kustomize ({@code kubectl kustomize}; bin/test installs kubectl when
 * it is missing) into a Pod that can start: the ConfigMap it mounts is generated with config.yaml in it, the
 * router accepts that config without a warning, readiness follows /health, the grace period outlasts the
 * drain, the Service reaches the pod, and each overlay binds its Role to the pod's ServiceAccount.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KustomizeTest {
    private static final Path KUSTOMIZE = DeployFiles.repositoryRoot().resolve("deploy/kubernetes");

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dynamo-pod-discovery", "overlays/dynamo-metadata-discovery"})
    void rendersAPodThatCanStart(String dir) throws Exception {
        List<Map<String, Object>> docs = DeployFiles.kustomize(KUSTOMIZE.resolve(dir));

        Map<String, Object> deployment = only(docs, "Deployment");
        Map<String, Object> pod = at(deployment, "spec", "template", "spec");
        Map<String, Object> container = at(pod, "containers", 0);
        // The generated ConfigMap's name carries a content hash; the Deployment must name that exact one.
        String mounted = at(pod, "volumes", 0, "configMap", "name");
        Map<String, Object> configMap = only(docs, "ConfigMap");
        assertThat(mounted).isEqualTo(at(configMap, "metadata", "name")).startsWith("continuum-router-config-");
        LoadResult config = DeployFiles.validate((String) at(configMap, "data", "config.yaml"),
                Map.of("CONTINUUM_ADMIN_TOKEN", "c0ffee4a91d2"));
        assertThat(config.problems()).as(config.report().toString()).isEmpty();
        assertThat((String) at(container, "readinessProbe", "httpGet", "path")).isEqualTo("/health");
        assertThat((int) at(pod, "terminationGracePeriodSeconds")).isGreaterThan((int) DeployFiles.drainSeconds(config));
        assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();
        assertThat((String) at(container, "volumeMounts", 1, "mountPath")).isEqualTo("/tmp");
        assertThat((String) at(container, "env", 0, "name")).isEqualTo("CONTINUUM_ADMIN_TOKEN");
        Map<String, Object> service = only(docs, "Service");
        assertThat((String) at(service, "spec", "ports", 0, "targetPort")).isEqualTo(at(container, "ports", 0, "name"));
        Map<String, Object> podLabels = at(deployment, "spec", "template", "metadata", "labels");
        assertThat(podLabels).containsAllEntriesOf(at(service, "spec", "selector"));
        String account = at(pod, "serviceAccountName");
        assertThat((String) at(only(docs, "ServiceAccount"), "metadata", "name")).isEqualTo(account);
        assertThat(docs).allSatisfy(d -> assertThat((String) at(d, "metadata", "namespace")).isEqualTo("dynamo"));
        if (dir.startsWith("overlays/")) {
            Map<String, Object> binding = only(docs, "RoleBinding");
            assertThat((String) at(binding, "subjects", 0, "name")).isEqualTo(account);
            assertThat((String) at(binding, "roleRef", "name")).isEqualTo(at(only(docs, "Role"), "metadata", "name"));
        }
    }
}
