package dev.continuum.router.discovery.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.continuum.router.discovery.DynamoSnapshot;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.discovery.etcd}.
 *
 * @param endpoints  normalized {@code http(s)://host:port} URLs
 * @param namespace  the workers' {@code DYN_NAMESPACE} when one graph is watched
 * @param namespaces several graphs; exclusive with a non-default {@code namespace}
 */
public record EtcdConfig(
        List<String> endpoints,
        String namespace,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> namespaces,
        @Nullable EtcdTlsConfig tls,
        @Nullable EtcdAuthConfig auth,
        BackoffConfig watchReconnectBackoff) {

    public EtcdConfig {
        endpoints = List.copyOf(endpoints);
        Objects.requireNonNull(namespace, "namespace");
        namespaces = List.copyOf(namespaces);
        Objects.requireNonNull(watchReconnectBackoff, "watchReconnectBackoff");
    }

    public static EtcdConfig defaults() {
        return new EtcdConfig(List.of(), DynamoSnapshot.DEFAULT_NAMESPACE, List.of(), null, null,
                BackoffConfig.defaults());
    }

    /** The namespaces to watch: {@code namespaces} when set, else {@code [namespace]}. */
    public List<String> effectiveNamespaces() {
        return namespaces.isEmpty() ? List.of(namespace) : namespaces;
    }

    /** Whether the connection uses TLS (an {@code https://} endpoint or a {@code tls} block). */
    public boolean usesTls() {
        return tls != null || endpoints.stream().anyMatch(e -> e.startsWith("https://"));
    }

    public EtcdConfig withEndpoints(List<String> newEndpoints) {
        return new EtcdConfig(newEndpoints, namespace, namespaces, tls, auth, watchReconnectBackoff);
    }

    public EtcdConfig withNamespaces(String newNamespace, List<String> newNamespaces) {
        return new EtcdConfig(endpoints, newNamespace, newNamespaces, tls, auth, watchReconnectBackoff);
    }

    public EtcdConfig withTls(@Nullable EtcdTlsConfig newTls) {
        return new EtcdConfig(endpoints, namespace, namespaces, newTls, auth, watchReconnectBackoff);
    }

    public EtcdConfig withAuth(@Nullable EtcdAuthConfig newAuth) {
        return new EtcdConfig(endpoints, namespace, namespaces, tls, newAuth, watchReconnectBackoff);
    }

    public EtcdConfig withBackoff(BackoffConfig backoff) {
        return new EtcdConfig(endpoints, namespace, namespaces, tls, auth, backoff);
    }
}
