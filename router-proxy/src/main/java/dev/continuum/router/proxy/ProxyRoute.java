package dev.continuum.router.proxy;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.proxy.metrics.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;
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
        CHAT,
        /** Answered by the route's {@link LocalAnswer} after authentication and rate limits; nothing is dispatched. */
        LOCAL
    }

    /**
     * A {@code POST} answered by the router itself once the caller is admitted (an ingress's token count, say).
     * Called on the client's event loop: it must not block; work that may (tokenizing) completes the answer later.
     */
    @FunctionalInterface
    public interface LocalAnswer {
        /**
         * The response to {@code body} (borrowed for the call only: read what is needed before returning), now or
         * later, on any thread; a complete response the caller owns, in the route's wire. The proxy writes it on
         * the client's event loop (or releases it when the client left meanwhile); a stage that fails is a 500.
         */
        CompletionStage<FullHttpResponse> answer(ByteBuf body, ByteBufAllocator alloc);
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
    private final @Nullable LocalAnswer local;
    private final @Nullable Predicate<BackendConfig> nativeWire;

    private ProxyRoute(String path, Endpoint endpoint, Kind kind, @Nullable IngressConverter converter) {
        this(path, endpoint, kind, converter, null, null);
    }

    private ProxyRoute(String path, Endpoint endpoint, Kind kind, @Nullable IngressConverter converter,
                       @Nullable LocalAnswer local, @Nullable Predicate<BackendConfig> nativeWire) {
        this.path = path;
        this.endpoint = endpoint;
        this.kind = kind;
        this.converter = converter;
        this.local = local;
        this.nativeWire = nativeWire;
    }

    /**
     * An ingress at {@code path} ({@code POST}) whose requests {@code converter} turns into chat completions
     * (sent to the backend's {@code /v1/chat/completions}, without the client's query) and whose answers it
     * turns back.
     */
    public static ProxyRoute converted(String path, Endpoint endpoint, IngressConverter converter) {
        return new ProxyRoute(absolute(path), Objects.requireNonNull(endpoint, "endpoint"), Kind.CHAT,
                Objects.requireNonNull(converter, "converter"));
    }

    /**
     * Like {@link #converted}, except for a request whose model a backend that {@code nativeWire} accepts serves
     * (for this caller): that request is not converted but sent as the client wrote it (client routing fields
     * removed) to the same path of those backends only, their answers relayed untouched; the dispatch hook pins it
     * by model alone (a {@link DispatchRequest#chatBody() chatBody} of false), afresh on every send.
     */
    public static ProxyRoute convertedUnlessNative(String path, Endpoint endpoint, IngressConverter converter,
                                                   Predicate<BackendConfig> nativeWire) {
        return new ProxyRoute(absolute(path), Objects.requireNonNull(endpoint, "endpoint"), Kind.CHAT,
                Objects.requireNonNull(converter, "converter"), null, Objects.requireNonNull(nativeWire, "nativeWire"));
    }

    /**
     * A route at {@code path} ({@code POST}) that forwards the client's body as it is to the same path of the
     * backend serving its {@code model}; the dispatch hook is never asked (nothing there is pinned).
     */
    public static ProxyRoute passthrough(String path, Endpoint endpoint) {
        return new ProxyRoute(absolute(path), Objects.requireNonNull(endpoint, "endpoint"), Kind.COMPLETIONS, null);
    }

    /**
     * A route at {@code path} ({@code POST}) answered by {@code answer} after authentication and rate limits,
     * with the router's own errors in {@code errors}'s shape.
     */
    public static ProxyRoute local(String path, Endpoint endpoint, LocalAnswer answer, IngressConverter errors) {
        return new ProxyRoute(absolute(path), Objects.requireNonNull(endpoint, "endpoint"), Kind.LOCAL,
                Objects.requireNonNull(errors, "errors"), Objects.requireNonNull(answer, "answer"), null);
    }

    private static String absolute(String path) {
        Objects.requireNonNull(path, "path");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path: " + path + " (expected: an absolute path)");
        }
        return path;
    }

    /** The backends that take this route's wire unconverted ({@link #convertedUnlessNative}), else null. */
    public @Nullable Predicate<BackendConfig> nativeWire() {
        return nativeWire;
    }

    /** A {@link Kind#LOCAL} route's answer, else null. */
    public @Nullable LocalAnswer localAnswer() {
        return local;
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

    /**
     * The ingress's converter, or null when the client already speaks the upstream's wire; on a
     * {@link Kind#LOCAL} route only its error shape is used.
     */
    public @Nullable IngressConverter converter() {
        return converter;
    }

    @Override
    public String toString() {
        return path;
    }
}
