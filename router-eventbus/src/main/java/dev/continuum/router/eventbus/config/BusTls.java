package dev.continuum.router.eventbus.config;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.event_bus.tls}: PEM files, read when the listener (re)builds its TLS context.
 *
 * @param cert     the server certificate chain
 * @param key      its PKCS#8 private key
 * @param clientCa CA certificates that client certificates must chain to, or null (tokens only)
 */
public record BusTls(String cert, String key, @Nullable String clientCa) {
    public BusTls {
        Objects.requireNonNull(cert, "cert");
        Objects.requireNonNull(key, "key");
    }
}
