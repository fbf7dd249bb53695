package dev.continuum.router.proxy.http;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * A request for a {@link LocalRoute}, already past the trust boundary (no {@code x-dynamo-*}
 * headers) and fully read. {@code headers} must be treated as read-only.
 *
 * @param path          the raw path, without the query
 * @param rawQuery      what followed {@code ?}, undecoded, or null
 * @param remoteAddress the TCP peer; null for a unix-socket client
 */
public record LocalRequest(HttpMethod method, String path, @Nullable String rawQuery, HttpHeaders headers,
                           byte[] body, @Nullable InetSocketAddress remoteAddress) {

    /** The first value of a header, or null. */
    public @Nullable String header(CharSequence name) {
        return headers.get(name);
    }
}
