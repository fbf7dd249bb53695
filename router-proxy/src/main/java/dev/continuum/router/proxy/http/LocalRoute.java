package dev.continuum.router.proxy.http;

import java.util.concurrent.CompletableFuture;

/**
 * A route the server answers itself rather than proxying ({@code /health}, {@code /metrics},
 * {@code /admin/*}...), registered on {@link HttpServer.Builder} by exact path or by prefix.
 * Local routes are not behind the client API keys or rate limits; they bring their own auth.
 *
 * <p>{@link #handle} runs on the connection's event loop and must not block: it should answer at
 * once or return a future completed later by someone else. A route that has to block overrides
 * {@link #blocking()} to return true and is then run on the server's blocking executor.
 */
@FunctionalInterface
public interface LocalRoute {
    CompletableFuture<LocalResponse> handle(LocalRequest request);

    /** True when {@link #handle} may block; it then runs off the event loop. */
    default boolean blocking() {
        return false;
    }
}
