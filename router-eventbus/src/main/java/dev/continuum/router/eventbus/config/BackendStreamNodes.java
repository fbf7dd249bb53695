package dev.continuum.router.eventbus.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import java.net.URI;
import java.net.URISyntaxException;
import org.jspecify.annotations.Nullable;

/**
 * The two fields that say how to reach a backend's SSE KV-event stream, read the same way by the router's
 * {@code dynamo.kv_cache_index.sources[]} and by the kv-listener's {@code sources[]}: the {@code url}, and the
 * {@code tls} block beside an {@code https} one. Each file names the CA key as its own TLS blocks do.
 */
public final class BackendStreamNodes {
    private BackendStreamNodes() {
    }

    /**
     * A {@code tls} block as read: absent, or present with the CA bundle to trust (null: the JDK's trust store);
     * {@code valid} is false when an error was recorded on it.
     */
    public record Tls(boolean present, boolean valid, @Nullable BackendTrust trust) {
        static final Tls ABSENT = new Tls(false, true, null);
        static final Tls INVALID = new Tls(true, false, null);
    }

    /** {@code http(s)://host[:port]/path}, no credentials or fragment; null, with an error on {@code node}, else. */
    public static @Nullable URI url(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            node.error("missing (expected: http(s)://host:port/path of the backend's SSE KV-event stream)");
            return null;
        }
        try {
            URI uri = new URI(text.trim());
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                    || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
                node.error(Problems.render(Problems.maskUserInfo(text))
                        + " (expected: http(s)://host:port/path, no credentials or fragment)");
                return null;
            }
            return uri;
        } catch (URISyntaxException e) {
            node.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: http(s)://host:port/path)");
            return null;
        }
    }

    /** The {@code tls} block beside {@code url}: only with {@code https}, a map whose {@code caKey} names a bundle. */
    public static Tls tls(ConfigNode tls, URI url, String caKey) {
        if (!tls.isPresent() && tls.kind() != ConfigNode.Kind.NULL) {
            return Tls.ABSENT;
        }
        if (!"https".equals(url.getScheme())) {
            tls.error("set (expected: only with an https:// url)");
            return Tls.INVALID;
        }
        if (tls.isPresent() && tls.kind() != ConfigNode.Kind.MAP) {
            tls.invalid("a map with " + caKey);
            return Tls.INVALID;
        }
        ConfigNode ca = tls.get(caKey);
        if (!ca.isPresent()) {
            return new Tls(true, true, null);
        }
        BackendTrust trust = BackendTrust.bind(ca);
        return trust == null ? Tls.INVALID : new Tls(true, true, trust);
    }
}
