package dev.continuum.router.kv.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Reads one artifact's bytes, refusing more than {@link #MAX_BYTES}: a declared size or Content-Length over the
 * cap is refused before a byte of the body is read, and a body that grows past it is abandoned at the first
 * chunk beyond. Blocking: runs on the artifact pool only.
 *
 * <p>Redirects are followed here (at most {@link #MAX_REDIRECTS}), not by the HTTP client, so that a redirect to
 * another host never carries the Hugging Face token and an https URL never leads to plain http.
 */
public final class ArtifactFetcher {
    public static final int MAX_BYTES = 64 * 1024 * 1024;
    public static final int MAX_REDIRECTS = 5;
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    /** Why a fetch failed, as its result label. */
    public static final class Failure extends IOException {
        private static final long serialVersionUID = 1L;
        private final ArtifactResult result;

        Failure(ArtifactResult result, String message) {
            super(message);
            this.result = result;
        }

        public ArtifactResult result() {
            return result;
        }
    }

    private final HttpClient client;
    private final int maxBytes;
    private final @Nullable String hfEndpoint;
    private final @Nullable String hfToken;

    /**
     * @param hfEndpoint {@code HF_ENDPOINT}, or null for {@code https://huggingface.co}
     * @param hfToken    {@code HF_TOKEN}, sent to the Hub's host only
     */
    public ArtifactFetcher(@Nullable String hfEndpoint, @Nullable String hfToken) {
        this(hfEndpoint, hfToken, MAX_BYTES);
    }

    ArtifactFetcher(@Nullable String hfEndpoint, @Nullable String hfToken, int maxBytes) {
        this.client = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
        this.maxBytes = maxBytes;
        this.hfEndpoint = hfEndpoint == null || hfEndpoint.isBlank() ? null : hfEndpoint;
        this.hfToken = hfToken == null || hfToken.isBlank() ? null : hfToken;
    }

    public int maxBytes() {
        return maxBytes;
    }

    /**
     * The bytes at {@code location}.
     *
     * @param declaredSize the card's {@code size}, or null; used to refuse early, never trusted over the bytes
     */
    public byte[] fetch(ArtifactLocation location, @Nullable Long declaredSize, boolean allowHttp, boolean allowHf)
            throws IOException, InterruptedException {
        if (declaredSize != null && declaredSize > maxBytes) {
            throw new Failure(ArtifactResult.TOO_LARGE, "declared size " + declaredSize + " is over " + maxBytes);
        }
        if (location instanceof ArtifactLocation.Local l) {
            if (!Files.isRegularFile(l.path())) {
                throw new Failure(ArtifactResult.FETCH_FAILED, "not a regular file");
            }
            if (Files.size(l.path()) > maxBytes) {
                throw new Failure(ArtifactResult.TOO_LARGE, "file over " + maxBytes + " bytes");
            }
            try (InputStream in = Files.newInputStream(l.path())) {
                return readBounded(in);
            }
        }
        if (location instanceof ArtifactLocation.Http h) {
            if (!allowHttp) {
                throw new Failure(ArtifactResult.DISALLOWED, "http(s) artifacts are off (allow_http_artifacts)");
            }
            return get(h.uri(), null);
        }
        ArtifactLocation.HuggingFace hf = (ArtifactLocation.HuggingFace) location;
        if (!allowHf) {
            throw new Failure(ArtifactResult.DISALLOWED, "hf:// artifacts are off (allow_hf_artifacts)");
        }
        URI uri = hf.uri(Objects.requireNonNullElse(hfEndpoint, "https://huggingface.co"));
        return get(uri, hfToken);
    }

    private byte[] get(URI start, @Nullable String bearer) throws IOException, InterruptedException {
        URI uri = start;
        String tokenHost = bearer == null ? null : start.getHost();
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT).GET();
            if (bearer != null && uri.getHost() != null && uri.getHost().equalsIgnoreCase(tokenHost)) {
                b.header("Authorization", "Bearer " + bearer);
            }
            HttpResponse<InputStream> r = client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = r.body()) {
                int status = r.statusCode();
                if (status >= 300 && status < 400 && status != 304) {
                    String location = r.headers().firstValue("location").orElse(null);
                    if (location == null) {
                        throw new Failure(ArtifactResult.FETCH_FAILED, "redirect " + status + " without Location");
                    }
                    URI next = uri.resolve(location);
                    String scheme = next.getScheme() == null ? "" : next.getScheme().toLowerCase(Locale.ROOT);
                    if (!scheme.equals("https") && !(scheme.equals("http") && uri.getScheme().equals("http"))) {
                        throw new Failure(ArtifactResult.FETCH_FAILED, "redirect to a " + scheme + " URL refused");
                    }
                    uri = next;
                    continue;
                }
                if (status != 200) {
                    throw new Failure(ArtifactResult.FETCH_FAILED, "HTTP " + status);
                }
                long length = r.headers().firstValueAsLong("content-length").orElse(-1);
                if (length > maxBytes) {
                    throw new Failure(ArtifactResult.TOO_LARGE, "Content-Length " + length + " is over " + maxBytes);
                }
                return readBounded(body);
            }
        }
        throw new Failure(ArtifactResult.FETCH_FAILED, "more than " + MAX_REDIRECTS + " redirects");
    }

    private byte[] readBounded(InputStream in) throws IOException {
        byte[] buf = new byte[Math.min(maxBytes + 1, 256 * 1024)];
        int len = 0;
        for (int n; (n = in.read(buf, len, buf.length - len)) > 0; ) {
            len += n;
            if (len > maxBytes) {
                throw new Failure(ArtifactResult.TOO_LARGE, "more than " + maxBytes + " bytes");
            }
            if (len == buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min((long) maxBytes + 1, 2L * buf.length));
            }
        }
        return Arrays.copyOf(buf, len);
    }
}
