package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BusTls;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The listener's TLS context for one generation of {@code tls} files: TLS 1.3 only, ALPN {@code h2} only, and a
 * client certificate asked for (optional) when a client CA is configured. The generation number changes only
 * when the client CA's bytes change, so identities verified by an older CA can be told apart.
 *
 * @param context      what new connections handshake with
 * @param caGeneration the client-CA generation this context verifies against
 * @param caBytes      the client-CA file as read, or null without one (compared on reload)
 */
public record BusTlsContext(SslContext context, long caGeneration, byte @Nullable [] caBytes) {
    public static final String TLS_1_3 = "TLSv1.3";

    /** Reads the files; throws {@link IllegalStateException} naming the field when one cannot be used. */
    public static BusTlsContext build(BusTls tls, @Nullable BusTlsContext previous) {
        byte[] ca = tls.clientCa() == null ? null : read("dynamo.event_bus.tls.client_ca", tls.clientCa());
        long generation = previous == null ? 1
                : Arrays.equals(ca, previous.caBytes()) ? previous.caGeneration() : previous.caGeneration() + 1;
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(Path.of(tls.cert()).toFile(),
                            Path.of(tls.key()).toFile())
                    .sslProvider(SslProvider.JDK)
                    .protocols(TLS_1_3)
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            // No common protocol: select nothing; the listener then closes as handshake_failed.
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_2));
            if (tls.clientCa() != null) {
                builder.trustManager(Path.of(tls.clientCa()).toFile()).clientAuth(ClientAuth.OPTIONAL);
            }
            return new BusTlsContext(builder.build(), generation, ca);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("dynamo.event_bus.tls: cannot build the TLS context ("
                    + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
    }

    private static byte[] read(String field, String path) {
        try {
            return Files.readAllBytes(Path.of(path));
        } catch (IOException e) {
            throw new IllegalStateException(field + ": cannot read " + path, new UncheckedIOException(e));
        }
    }
}
