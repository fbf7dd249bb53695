package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.Secret;
import java.util.Objects;

/** {@code dynamo.discovery.etcd.auth}: etcd's username/password authentication (the Authenticate RPC). */
public record EtcdAuthConfig(String username, Secret password) {
    public EtcdAuthConfig {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
    }
}
