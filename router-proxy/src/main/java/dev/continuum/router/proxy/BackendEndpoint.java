package dev.continuum.router.proxy;

import java.net.URI;
import java.util.Locale;

/**
 * Where a backend's URL points, precomputed once: connect host and port, TLS, the {@code Host}
 * header to send, and the path prefix every client path is appended to ({@code http://h/api} +
 * {@code /v1/models} = {@code /api/v1/models}).
 */
record BackendEndpoint(String host, int port, boolean tls, String hostHeader, String pathPrefix) {

    static BackendEndpoint of(URI url) {
        String scheme = url.getScheme() == null ? "http" : url.getScheme().toLowerCase(Locale.ROOT);
        boolean tls = scheme.equals("https");
        String host = url.getHost();
        if (host == null) {
            throw new IllegalArgumentException("url: \"" + url + "\" (expected: http(s)://host[:port][/path])");
        }
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        int defaultPort = tls ? 443 : 80;
        int port = url.getPort() > 0 ? url.getPort() : defaultPort;
        String hostHeader = port == defaultPort ? host : host + ":" + port;
        String path = url.getRawPath() == null ? "" : url.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return new BackendEndpoint(bare, port, tls, hostHeader, path);
    }

    /** The upstream request target for a client path and optional raw query. */
    String target(String clientPath, @org.jspecify.annotations.Nullable String rawQuery) {
        String p = pathPrefix.isEmpty() ? clientPath : pathPrefix + clientPath;
        return rawQuery == null ? p : p + "?" + rawQuery;
    }
}
