package dev.continuum.router.testing;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One request as {@link TestUpstream} received it.
 *
 * @param headers every header, names lower-cased, values in arrival order
 */
public record RecordedRequest(String method, String uri, Map<String, List<String>> headers, String body) {
    public RecordedRequest {
        headers = Map.copyOf(headers);
    }

    /** The path without the query. */
    public String path() {
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }

    /** The first value of a header (any case), or null. */
    public @Nullable String header(String name) {
        List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    public boolean hasHeader(String name) {
        return headers.containsKey(name.toLowerCase(Locale.ROOT));
    }
}
