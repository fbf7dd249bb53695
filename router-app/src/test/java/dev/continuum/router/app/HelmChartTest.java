package dev.continuum.router.app;

import static dev.continuum.router.app.DeployFiles.at;
import static dev.continuum.router.app.DeployFiles.only;
import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.LoadResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;

/**
 * deploy/helm/continuum-router rendered and linted by the real helm (its Go library, through helm-java):
 * with the default values, a Pod that can start (the ConfigMap it mounts, probes on /health, a grace period
 * above the router's drain, a restrictive security context, a config the router accepts without a warning);
 * with every feature on (ci/all-features-values.yaml), every resource kind; and every value wired: changing
 * any one leaf of that file changes the rendered manifests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HelmChartTest {
    private static final Map<String, String> ENV = Map.of("CONTINUUM_ADMIN_TOKEN", "3f9a1c7e5b2d4068");
    private final Path chart = DeployFiles.repositoryRoot().resolve("deploy/helm/continuum-router");
    private final Path allFeatures = chart.resolve("ci/all-features-values.yaml");
    private Path scratch;

    @BeforeAll
    void scratchDirectory() throws IOException {
        scratch = Files.createTempDirectory("helm-values");
    }

    @AfterAll
    void removeScratch() throws IOException {
        try (var files = Files.list(scratch)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(scratch);
    }

    private String render(Path... valuesFiles) {
        var template = new Helm(chart).template().withName("edge").withNamespace("inference");
        for (Path values : valuesFiles) {
            template = template.withValuesFile(values);
        }
        return template.call();
    }

    @Test
    void lintsCleanInStrictMode() {
        LintResult lint = new Helm(chart).lint().strict().call();

        assertThat(lint.isFailed()).as(lint.getMessages().toString()).isFalse();
        assertThat(lint.getMessages()).allMatch(m -> m.startsWith("[INFO]"));
    }

    @Test
    void theDefaultValuesRenderAPodThatCanStart() throws IOException {
        List<Map<String, Object>> docs = DeployFiles.documents(render());

        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder(
                "ServiceAccount", "ConfigMap", "Service", "Deployment", "PodDisruptionBudget");
        Map<String, Object> deployment = only(docs, "Deployment");
        Map<String, Object> pod = at(deployment, "spec", "template", "spec");
        Map<String, Object> container = at(pod, "containers", 0);
        // The volume the router reads its config from is the ConfigMap the chart renders, with config.yaml in it.
        Map<String, Object> configMap = only(docs, "ConfigMap");
        assertThat((String) at(pod, "volumes", 0, "configMap", "name")).isEqualTo(at(configMap, "metadata", "name"));
        assertThat((List<Object>) at(container, "args")).containsExactly("serve", "--config",
                "/etc/continuum-router/config.yaml");
        assertThat((String) at(container, "volumeMounts", 0, "mountPath")).isEqualTo("/etc/continuum-router");
        LoadResult config = DeployFiles.validate((String) at(configMap, "data", "config.yaml"), ENV);
        assertThat(config.problems()).as(config.report().toString()).isEmpty();
        int port = at(container, "ports", 0, "containerPort");
        assertThat(config.orThrow().server().bindAddresses()).containsExactly(new BindAddress.Tcp("0.0.0.0", port));
        // Readiness follows /health, which answers 503 from the first moment of a drain; the kill comes after it.
        assertThat((String) at(container, "readinessProbe", "httpGet", "path")).isEqualTo("/health");
        assertThat((String) at(container, "startupProbe", "httpGet", "path")).isEqualTo("/health");
        int graceSeconds = at(pod, "terminationGracePeriodSeconds");
        assertThat(graceSeconds).isGreaterThan((int) DeployFiles.drainSeconds(config));
        int livenessWindow = (int) at(container, "livenessProbe", "periodSeconds")
                * (int) at(container, "livenessProbe", "failureThreshold");
        assertThat(livenessWindow).as("a drain never fails liveness").isGreaterThan(graceSeconds);
        // Non-root, nothing to escalate to, a read-only root with an emptyDir for /tmp.
        assertThat((Boolean) at(pod, "securityContext", "runAsNonRoot")).isTrue();
        assertThat((Boolean) at(container, "securityContext", "readOnlyRootFilesystem")).isTrue();
        assertThat((Boolean) at(container, "securityContext", "allowPrivilegeEscalation")).isFalse();
        assertThat((List<Object>) at(container, "securityContext", "capabilities", "drop")).containsExactly("ALL");
        assertThat((String) at(container, "volumeMounts", 1, "mountPath")).isEqualTo("/tmp");
        assertThat((Map<String, Object>) at(pod, "volumes", 1, "emptyDir")).containsKey("sizeLimit");
        assertThat((Map<String, Object>) at(container, "resources", "limits")).containsKey("memory");
        // The admin token comes from a Secret, under the variable the config reads.
        assertThat((String) at(container, "env", 0, "name")).isEqualTo("CONTINUUM_ADMIN_TOKEN");
        assertThat((Map<String, Object>) at(container, "env", 0, "valueFrom", "secretKeyRef")).containsKeys("name", "key");
        // The Service reaches the pods through the named port.
        Map<String, Object> service = only(docs, "Service");
        assertThat((String) at(service, "spec", "ports", 0, "targetPort")).isEqualTo(at(container, "ports", 0, "name"));
        Map<String, Object> podLabels = at(deployment, "spec", "template", "metadata", "labels");
        assertThat(podLabels).containsAllEntriesOf(at(service, "spec", "selector"));
        assertThat(podLabels).containsAllEntriesOf(at(only(docs, "PodDisruptionBudget"), "spec", "selector",
                "matchLabels"));
    }

    @Test
    void everyFeatureOnRendersEveryKindWithTheEgressTheConfigNames() throws IOException {
        List<Map<String, Object>> docs = DeployFiles.documents(render(allFeatures));

        assertThat(docs).extracting(d -> d.get("kind")).containsExactlyInAnyOrder("ServiceAccount", "ConfigMap",
                "Service", "Deployment", "PodDisruptionBudget", "ServiceMonitor", "NetworkPolicy", "Role",
                "RoleBinding");
        LoadResult config = DeployFiles.validate((String) at(only(docs, "ConfigMap"), "data", "config.yaml"), ENV);
        assertThat(config.problems()).as(config.report().toString()).isEmpty();
        // The egress opened by port: DNS, each backend URL's port (8000, https 443), the etcd endpoint's 2379,
        // the API server's 443; plus everything in the fleet's namespace for the kv_metrics publishers.
        Map<String, Object> policy = only(docs, "NetworkPolicy");
        List<Map<String, Object>> egress = at(policy, "spec", "egress");
        Set<Object> ports = egress.stream().flatMap(r -> ((List<Map<String, Object>>) r.getOrDefault("ports",
                List.of())).stream()).map(p -> p.get("port")).collect(Collectors.toSet());
        assertThat(ports).contains(53, 8000, 443, 2379);
        assertThat(egress).anySatisfy(r -> assertThat(r.toString()).contains("dynamo-fleet").doesNotContain("ports"));
        assertThat((String) at(only(docs, "ServiceMonitor"), "spec", "endpoints", 0, "path")).isEqualTo("/prometheus");
        assertThat((String) at(only(docs, "Role"), "metadata", "namespace")).isEqualTo("dynamo-fleet");
        assertThat((String) at(only(docs, "RoleBinding"), "subjects", 0, "name")).isEqualTo("router-sa");
    }

    @Test
    void everyValueIsWired() throws IOException {
        Map<String, Object> values = DeployFiles.yamlMap(Files.readString(allFeatures));
        // The all-features file sets every value the chart declares, so changing each of its leaves covers them all.
        Map<String, Object> defaults = DeployFiles.yamlMap(Files.readString(chart.resolve("values.yaml")));
        assertThat(keyPaths(values, "")).containsAll(keyPaths(defaults, ""));
        String base = render(allFeatures);
        List<String> unwired = new ArrayList<>();
        Map<String, Object> withoutConfig = new LinkedHashMap<>(values);
        withoutConfig.remove("config"); // the config is the ConfigMap's content, checked above as a whole
        for (List<Object> leaf : leaves(withoutConfig, new ArrayList<>())) {
            Path file = scratch.resolve("values-" + unwired.size() + "-" + leaf.hashCode() + ".yaml");
            Files.writeString(file, new Dump(DumpSettings.builder().build()).dumpToString(changed(values, leaf, 0)));
            if (render(file).equals(base)) {
                unwired.add(leaf.toString());
            }
        }
        assertThat(unwired).as("values whose change leaves the manifests as they were").isEmpty();
    }

    private static Set<String> keyPaths(Map<String, Object> map, String prefix) {
        Set<String> out = new java.util.TreeSet<>();
        map.forEach((k, v) -> {
            out.add(prefix + k);
            if (v instanceof Map<?, ?> m && !m.isEmpty() && !k.equals("config")) {
                out.addAll(keyPaths((Map<String, Object>) m, prefix + k + "."));
            }
        });
        return out;
    }

    /** The path of every scalar under {@code node}. */
    private static List<List<Object>> leaves(Object node, List<Object> path) {
        List<List<Object>> out = new ArrayList<>();
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> out.addAll(leaves(v, append(path, k))));
        } else if (node instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                out.addAll(leaves(list.get(i), append(path, i)));
            }
        } else {
            out.add(path);
        }
        return out;
    }

    private static List<Object> append(List<Object> path, Object step) {
        List<Object> out = new ArrayList<>(path);
        out.add(step);
        return out;
    }

    /** A copy of {@code node} with the scalar at {@code path} replaced by a different value of its type. */
    private static Object changed(Object node, List<Object> path, int depth) {
        if (depth == path.size()) {
            if (node instanceof Boolean b) {
                return !b;
            }
            if (node instanceof Integer i) {
                return i + 1;
            }
            return node instanceof Long l ? l + 1 : node + "w";
        }
        Object step = path.get(depth);
        if (node instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new LinkedHashMap<>(map);
            copy.put(step, changed(map.get(step), path, depth + 1));
            return copy;
        }
        List<Object> copy = new ArrayList<>((List<?>) node);
        copy.set((Integer) step, changed(copy.get((Integer) step), path, depth + 1));
        return copy;
    }
}
