package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.proxy.metrics.Endpoint;
import dev.continuum.router.testing.TestUpstream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalRoutingTest {

    @Test
    void splitsRequestTargets() {
        assertThat(HttpRequestHandler.Target.parse("/v1/models?a=1&b=2"))
                .isEqualTo(new HttpRequestHandler.Target("/v1/models", "a=1&b=2"));
        assertThat(HttpRequestHandler.Target.parse("/x#frag")).isEqualTo(new HttpRequestHandler.Target("/x", null));
        assertThat(HttpRequestHandler.Target.parse("http://host:80/v1/models"))
                .isEqualTo(new HttpRequestHandler.Target("/v1/models", null));
        assertThat(HttpRequestHandler.Target.parse("host:443")).isNull();
        assertThat(HttpRequestHandler.Target.parse("*")).isNull();
    }

    @Test
    void prefersExactRoutesThenTheLongestPrefix() {
        LocalRoute exact = r -> null;
        LocalRoute admin = r -> null;
        LocalRoute adminWorkers = r -> null;
        LocalRoutes routes = new LocalRoutes(Map.of("/health", exact),
                Map.of("/admin/", admin, "/admin/dynamo/", adminWorkers), "/metrics");

        assertThat(routes.find("/health").route()).isSameAs(exact);
        assertThat(routes.find("/health").endpoint()).isEqualTo(Endpoint.HEALTH);
        assertThat(routes.find("/admin/config").route()).isSameAs(admin);
        assertThat(routes.find("/admin/dynamo/workers").route()).isSameAs(adminWorkers);
        assertThat(routes.find("/admin/dynamo/workers").endpoint()).isEqualTo(Endpoint.ADMIN);
        assertThat(routes.find("/healthz")).isNull();
    }

    @Test
    void runsBlockingAndFailingRoutesSafely() throws Exception {
        try (TestUpstream a = TestUpstream.start("a")) {
            LocalRoute blocking = new LocalRoute() {
                @Override
                public CompletableFuture<LocalResponse> handle(LocalRequest request) {
                    String who = Thread.currentThread().getName();
                    return CompletableFuture.completedFuture(LocalResponse.json(200,
                            ("{\"thread\":\"" + who + "\",\"body\":\"" + new String(request.body(), StandardCharsets.UTF_8)
                                    + "\",\"query\":\"" + request.rawQuery() + "\"}")).withHeader("x-route", "blocking"));
                }

                @Override
                public boolean blocking() {
                    return true;
                }
            };
            LocalRoute failing = r -> {
                throw new IllegalStateException("boom");
            };
            LocalRoute late = r -> CompletableFuture.supplyAsync(() -> LocalResponse.text(202, "later"));
            RouterHarness router = RouterHarness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                    s -> s.routeExact("/blocking", blocking).routeExact("/failing", failing).routeExact("/late", late));
            try {
                var res = router.post("/blocking?x=1", "payload");
                assertThat(res.statusCode()).isEqualTo(200);
                assertThat(res.headers().firstValue("x-route")).hasValue("blocking");
                assertThat(res.body()).doesNotContain("continuum-io").contains("payload").contains("x=1");
                var failed = router.get("/failing");
                assertThat(failed.statusCode()).isEqualTo(500);
                assertThat(failed.body()).contains("\"type\":\"server_error\"");
                assertThat(router.get("/late").statusCode()).isEqualTo(202);
            } finally {
                router.close();
            }
        }
    }
}
