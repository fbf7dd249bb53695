package dev.continuum.router.eventplane.nats;

import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLException;

/** Turns a {@link NatsConfig} into the NATS client's options: servers, TLS from PEM files, one way to authenticate. */
final class NatsOptions {
    /** The longest protocol line accepted from a server (an event subject is far shorter). */
    static final int MAX_CONTROL_LINE = 4096;

    private NatsOptions() {
    }

    static Options of(NatsConfig config, ConnectionListener connections, ErrorListener errors) throws IOException {
        Options.Builder b = new Options.Builder()
                .servers(config.servers().toArray(String[]::new))
                .connectionName("continuum-router")
                .noEcho()
                .noRandomize()
                .maxReconnects(-1)
                .reconnectWait(config.reconnectWait())
                .connectionTimeout(config.connectTimeout())
                .maxControlLine(MAX_CONTROL_LINE)
                // Nothing is published on the fleet's subjects, so there is nothing to buffer while away.
                .reconnectBufferSize(0)
                .connectionListener(connections)
                .errorListener(errors);
        NatsTlsConfig tls = config.tls();
        if (tls != null || config.servers().stream().anyMatch(s -> s.startsWith("tls://"))) {
            b.sslContext(sslContext(tls));
        }
        NatsAuthConfig auth = config.auth();
        if (auth != null) {
            if (auth.token() != null) {
                b.token(auth.token().reveal().toCharArray());
            } else if (auth.username() != null && auth.password() != null) {
                b.userInfo(auth.username().toCharArray(), auth.password().reveal().toCharArray());
            } else if (auth.nkeySeed() != null) {
                b.authHandler(Nats.staticCredentials(null, auth.nkeySeed().reveal().toCharArray()));
            } else if (auth.credentialsFile() != null) {
                Path file = auth.credentialsFile();
                // Read now, so a missing or unreadable file fails this connection attempt with its path.
                b.authHandler(Nats.staticCredentials(Files.readString(file, StandardCharsets.UTF_8)
                        .getBytes(StandardCharsets.UTF_8)));
            }
        }
        return b.build();
    }

    private static javax.net.ssl.SSLContext sslContext(@org.jspecify.annotations.Nullable NatsTlsConfig tls)
            throws SSLException {
        SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK);
        if (tls != null && tls.caCert() != null) {
            builder.trustManager(tls.caCert().toFile());
        }
        if (tls != null && tls.clientCert() != null && tls.clientKey() != null) {
            builder.keyManager(tls.clientCert().toFile(), Path.of(tls.clientKey().reveal()).toFile());
        }
        SslContext context = builder.build();
        return ((JdkSslContext) context).context();
    }
}
