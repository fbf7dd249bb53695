package dev.continuum.router.core.proxy;

import dev.continuum.router.core.metrics.Endpoint;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A path the proxy answers and what it does there. The OpenAI routes (chat, completions, models, embeddings,
 * rerank) are built in; another ingress is
 * bound to its own path with {@link #converted} and registered through {@link ProxyOptions#withIngress}.
 * The exchange asks the route (its {@link Kind} and {@link #converter()}), never the path.
 */
public final class ProxyRoute {
    /** What a route does with a request. */
    public enum Kind {
        /** Answers the model list itself ({@code GET}). */
        MODEL_LIST,
        /** Forwards a body to a backend serving its {@code model} (completions, embeddings, rerank); no dispatch hook. */
        COMPLETIONS,
        /** Dispatches a chat-completion body (the dispatch hook may pin it). */
        CHAT
    }

    public static final ProxyRoute CHAT_COMPLETIONS =
            new ProxyRoute("/v1/chat/completions", Endpoint.CHAT_COMPLETIONS, Kind.CHAT, null);
    public static final ProxyRoute COMPLETIONS =
            new ProxyRoute("/v1/completions", Endpoint.COMPLETIONS, Kind.COMPLETIONS, null);
    public static final ProxyRoute MODELS = new ProxyRoute("/v1/models", Endpoint.MODELS, Kind.MODEL_LIST, null);
    public static final ProxyRoute EMBEDDINGS =
            new ProxyRoute("/v1/embeddings", Endpoint.EMBEDDINGS, Kind.COMPLETIONS, null);
    public static final ProxyRoute RERANK = new ProxyRoute("/v1/rerank", Endpoint.RERANK, Kind.COMPLETIONS, null);

    /** Where a converted request goes upstream. */
    static final String CHAT_UPSTREAM_PATH = "/v1/chat/completions";

    private final String path;
    private final Endpoint endpoint;
    private final Kind kind;
    private final @Nullable IngressConverter converter;

    private ProxyRoute(String path, Endpoint endpoint, Kind kind, @Nullable IngressConverter converter) {
        this.path = path;
        this.endpoint = endpoint;
        this.kind = kind;
        this.converter = converter;
    }

    /**
     * An ingress at {@code path} ({@code POST}) whose requests {@code converter} turns into chat completions
     * (sent to the backend's {@code /v1/chat/completions}, without the client's query) and whose answers it
     * turns back.
     */
    public static ProxyRoute converted(String path, Endpoint endpoint, IngressConverter converter) {
        Objects.requireNonNull(path, "path");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path: " + path + " (expected: an absolute path)");
        }
        return new ProxyRoute(path, Objects.requireNonNull(endpoint, "endpoint"), Kind.CHAT,
                Objects.requireNonNull(converter, "converter"));
    }

    public String path() {
        return path;
    }

    /** The metrics label of requests on this route. */
    public Endpoint endpoint() {
        return endpoint;
    }

    public Kind kind() {
        return kind;
    }

    /** The ingress's converter, or null when the client already speaks the upstream's wire. */
    public @Nullable IngressConverter converter() {
        return converter;
    }

    @Override
    public String toString() {
        return path;
    }
}
