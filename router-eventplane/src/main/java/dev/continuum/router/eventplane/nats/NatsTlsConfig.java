package dev.continuum.router.eventplane.nats;

import dev.continuum.router.core.config.Secret;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.nats.tls}: the CA that signs the servers' certificates (the JDK's trust store without one) and
 * an optional client certificate and key (PEM files) for servers that verify clients. The key path is kept as a
 * secret so readbacks mask it, as {@code dynamo.discovery.etcd.tls} does.
 */
public record NatsTlsConfig(@Nullable Path caCert, @Nullable Path clientCert, @Nullable Secret clientKey) {
}
