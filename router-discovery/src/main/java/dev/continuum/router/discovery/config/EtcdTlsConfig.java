package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.Secret;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.discovery.etcd.tls}. Without a CA the JDK's trust store verifies the server.
 *
 * @param clientKey  path of the PKCS#8 PEM private key; a {@link Secret} so readbacks mask it
 * @param serverName the name to verify the server certificate against (and send as SNI/authority) when it
 *                   differs from the endpoint host
 */
public record EtcdTlsConfig(
        @Nullable Path caCert,
        @Nullable Path clientCert,
        @Nullable Secret clientKey,
        @Nullable String serverName) {
}
