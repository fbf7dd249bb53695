package dev.continuum.router.admin;

import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.proxy.http.LocalRoute;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * {@code /health} and {@code /healthz}, never behind auth: 200 while the router accepts traffic,
 * 503 once a graceful shutdown began, so load balancers stop sending before listeners close.
 */
public final class HealthRoute implements LocalRoute {
    private static final LocalResponse OK = LocalResponse.json(200, "{\"status\":\"ok\"}");
    private static final LocalResponse DRAINING = LocalResponse.json(503, "{\"status\":\"draining\"}");

    private final BooleanSupplier ready;

    public HealthRoute(BooleanSupplier ready) {
        this.ready = ready;
    }

    @Override
    public CompletableFuture<LocalResponse> handle(LocalRequest request) {
        return CompletableFuture.completedFuture(ready.getAsBoolean() ? OK : DRAINING);
    }
}
