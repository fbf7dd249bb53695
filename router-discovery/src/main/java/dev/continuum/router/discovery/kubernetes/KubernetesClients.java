package dev.continuum.router.discovery.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Builds the client of one pass. Credentials: in-cluster first (the ServiceAccount token and CA mounted into
 * the Pod, with {@code KUBERNETES_SERVICE_HOST}/{@code _PORT}), then {@code KUBECONFIG} or
 * {@code ~/.kube/config} through fabric8's own kubeconfig reader. fabric8's auto-configuration tries the
 * kubeconfig first, which on a developer laptop inside a cluster context picks the wrong identity; the Pod's
 * own ServiceAccount must win (docs/discovery.md, "Client, credentials, timers").
 */
@FunctionalInterface
public interface KubernetesClients {
    String SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

    /** A new client whose requests (list pages and watch opens) are bounded by {@code requestTimeout}. */
    KubernetesClient create(Duration requestTimeout);

    /** The production factory, reading the environment and the mounted ServiceAccount at every pass. */
    static KubernetesClients inClusterFirst(Map<String, String> environment) {
        return requestTimeout -> {
            Config config = inClusterConfig(environment, Path.of(SERVICE_ACCOUNT_DIR));
            if (config == null) {
                config = Config.autoConfigure(null);
            }
            return build(config, requestTimeout);
        };
    }

    /**
     * A client for {@code base} with the source's bounds: every request within {@code requestTimeout}, and no
     * automatic watch reconnects (the source relists after every end of a watch instead of resuming).
     */
    static KubernetesClient build(Config base, Duration requestTimeout) {
        int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, requestTimeout.toMillis()));
        Config config = new ConfigBuilder(base)
                .withConnectionTimeout(millis)
                .withRequestTimeout(millis)
                .withWatchReconnectLimit(0)
                .withRequestRetryBackoffLimit(0)
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private static @org.jspecify.annotations.Nullable Config inClusterConfig(Map<String, String> environment, Path dir) {
        String host = environment.get("KUBERNETES_SERVICE_HOST");
        String port = environment.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
        Path token = dir.resolve("token");
        if (host == null || host.isEmpty() || !Files.isReadable(token)) {
            return null;
        }
        String hostPart = host.contains(":") ? "[" + host + "]" : host;
        Path ca = dir.resolve("ca.crt");
        return new ConfigBuilder(Config.empty())
                .withMasterUrl("https://" + hostPart + ":" + port)
                .withCaCertFile(Files.isReadable(ca) ? ca.toString() : null)
                // Projected tokens rotate: read the file for every request rather than once.
                .withOauthTokenProvider(() -> read(token))
                .build();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
