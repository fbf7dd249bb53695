package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BackendTrust;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.net.URI;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * TLS to a backend's {@code https} KV-event stream, for the router's direct sources and the kv-listener alike:
 * TLS 1.3 or 1.2, the certificate verified against the configured CA bundle or else the JDK's trust store, and
 * the URL's host checked against it (RFC 2818 rules: DNS or IP subject alternative names), with SNI for a host
 * name. A context is immutable and shared by every connection to the same trust.
 */
public final class BackendTls {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private BackendTls() {
    }

    /** Loading the JDK's trust store is slow, and the context is immutable: one per process. */
    private static final class SystemTrust {
        static final SslContext CONTEXT = build(null);
    }

    /** The context for {@code trust}; null means the JDK's trust store. */
    public static SslContext context(@Nullable BackendTrust trust) {
        return trust == null ? SystemTrust.CONTEXT : build(trust);
    }

    private static SslContext build(@Nullable BackendTrust trust) {
        try {
            SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .protocols(PROTOCOLS)
                    .endpointIdentificationAlgorithm("HTTPS");
            if (trust != null) {
                builder.trustManager(trust.trusted().toArray(X509Certificate[]::new));
            }
            return builder.build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the TLS context for a backend KV-event stream", e);
        }
    }

    public static boolean isHttps(URI url) {
        return "https".equals(url.getScheme());
    }

    public static int port(URI url) {
        return url.getPort() != -1 ? url.getPort() : isHttps(url) ? 443 : 80;
    }

    /** The handler that verifies {@code url}'s host; first in the connection's pipeline. */
    public static SslHandler handler(SslContext context, Channel channel, URI url) {
        return context.newHandler(channel.alloc(), url.getHost(), port(url));
    }

    /**
     * Why a handshake failed, in words from a closed set: never the peer's certificate contents or the exception's
     * own text, which can carry names from the peer.
     */
    public static String reason(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
                return "certificate not trusted";
            }
            if (t instanceof CertificateException c && c.getMessage() != null
                    && (c.getMessage().startsWith("No subject alternative") || c.getMessage().startsWith("No name"))) {
                return "certificate does not match the host";
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return "handshake failed";
    }

    /** Whether {@code error} (or a cause) is a TLS failure. */
    public static boolean isTls(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SSLException || t instanceof CertificateException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
