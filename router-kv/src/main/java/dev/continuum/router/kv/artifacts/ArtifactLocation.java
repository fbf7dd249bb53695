package dev.continuum.router.kv.artifacts;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Where a card's {@code CheckedFile.path} points: a local file ({@code file://} or a plain path), an
 * {@code http(s)://} URL, or {@code hf://<owner>/<repo>/<file path>} (optionally {@code <repo>@<revision>}), which
 * is fetched from {@code $HF_ENDPOINT/<owner>/<repo>/resolve/<revision>/<file path>} (revision {@code main}).
 * As upstream's {@code CheckedFile}, a path that parses as a URL with a scheme is a URL, anything else a path.
 */
public sealed interface ArtifactLocation {
    /** Longest card path accepted; longer ones are refused unparsed. */
    int MAX_PATH_CHARS = 4096;

    record Local(Path path) implements ArtifactLocation {
    }

    record Http(URI uri) implements ArtifactLocation {
    }

    record HuggingFace(String repo, String revision, String file) implements ArtifactLocation {
        /** The download URL under {@code endpoint} (no trailing slash needed). */
        public URI uri(String endpoint) {
            String base = endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint;
            return URI.create(base + "/" + repo + "/resolve/" + revision + "/" + file);
        }
    }

    /** The location of {@code path}, or null when it is none of the forms above. */
    static @Nullable ArtifactLocation parse(String path) {
        if (path.isEmpty() || path.length() > MAX_PATH_CHARS || path.indexOf('\0') >= 0) {
            return null;
        }
        int colon = path.indexOf("://");
        if (colon <= 0) {
            try {
                return new Local(Path.of(path));
            } catch (InvalidPathException e) {
                return null;
            }
        }
        String scheme = path.substring(0, colon).toLowerCase(Locale.ROOT);
        try {
            switch (scheme) {
                case "file" -> {
                    return new Local(Path.of(new URI(path)));
                }
                case "http", "https" -> {
                    URI uri = new URI(path);
                    return uri.getHost() == null ? null : new Http(uri);
                }
                case "hf" -> {
                    return huggingFace(path.substring(colon + 3));
                }
                default -> {
                    return null;
                }
            }
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }

    private static @Nullable ArtifactLocation huggingFace(String rest) {
        String[] parts = rest.split("/", 3);
        if (parts.length < 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
            return null;
        }
        String repo = parts[1];
        String revision = "main";
        int at = repo.indexOf('@');
        if (at >= 0) {
            revision = repo.substring(at + 1);
            repo = repo.substring(0, at);
        }
        for (String s : new String[] {parts[0], repo, revision}) {
            if (!s.matches("[A-Za-z0-9._-]{1,96}")) {
                return null;
            }
        }
        for (String segment : parts[2].split("/")) {
            if (segment.isEmpty() || segment.equals("..") || segment.equals(".")
                    || !segment.matches("[A-Za-z0-9._-]{1,255}")) {
                return null;
            }
        }
        return new HuggingFace(parts[0] + "/" + repo, revision, parts[2]);
    }
}
