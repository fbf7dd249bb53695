package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProxyingTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    private RouterHarness router;

    @Test
    void relaysABufferedCompletionWithStatusTypeAndUnchangedBody() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        String body = "{\"model\":\"m\",  \"messages\":[{\"role\":\"user\",\"content\":\"h\\u00e9llo\"}],\"extra\":{\"x\":[1,2]}}";

        HttpResponse<String> res = router.post("/v1/chat/completions?trace=1", body);

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(res.body()).contains("\"upstream\":\"a\"");
        RecordedRequest seen = a.completionRequests().get(0);
        assertThat(seen.body()).isEqualTo(body);
        assertThat(seen.uri()).isEqualTo("/v1/chat/completions?trace=1");
        assertThat(seen.header("host")).isEqualTo("127.0.0.1:" + a.port());
        assertThat(seen.header("content-length")).isEqualTo(Integer.toString(body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
    }

    @Test
    void appendsTheClientPathToTheBackendUrlPath() {
        router = harness.start(ConfigBuilder.create()
                .backend("a", URI.create(a.baseUrl() + "/api/"), "m").build());

        assertThat(router.post("/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\"}").statusCode()).isEqualTo(200);

        assertThat(a.completionRequests().get(0).uri()).isEqualTo("/api/v1/completions");
    }

    @Test
    void removesHopByHopHeadersAndKeepsEndToEndOnes() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());

        router.chat("m", "x-custom", "1", "x-tenant-id", "t-1", "authorization", "Bearer upstream-key",
                "proxy-authorization", "Basic Zm9vOmJhcg==");

        RecordedRequest seen = a.completionRequests().get(0);
        assertThat(seen.header("x-custom")).isEqualTo("1");
        assertThat(seen.header("x-tenant-id")).isEqualTo("t-1");
        // No router keys configured: the client's credential belongs to the upstream.
        assertThat(seen.header("authorization")).isEqualTo("Bearer upstream-key");
        assertThat(seen.hasHeader("proxy-authorization")).isFalse();
        assertThat(seen.hasHeader("upgrade")).isFalse();
    }

    @Test
    void backendApiKeyReplacesTheClientAuthorization() {
        router = harness.start(ConfigBuilder.create()
                .backend(ConfigBuilder.backendConfig("a", a.baseUrl(), 1, "sk-backend", null, true, false, "m"))
                .build());

        router.chat("m", "authorization", "Bearer client-key");

        assertThat(a.completionRequests().get(0).headers().get("authorization")).containsExactly("Bearer sk-backend");
    }

    @Test
    void reusesPooledUpstreamConnections() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());

        for (int i = 0; i < 5; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }

        assertThat(a.completionCount()).isEqualTo(5);
        assertThat(a.connectionsAccepted()).isEqualTo(1);
    }

    @Test
    void capsTheIdleConnectionsKeptPerBackend() throws Exception {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.poolSize = 2;
        router = harness.start(cfg.build());
        a.defaultReply(Reply.delayed(java.time.Duration.ofMillis(300), Reply.echo()));
        String body = "{\"model\":\"m\"}";
        List<java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>>> all = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            all.add(router.http.sendAsync(java.net.http.HttpRequest.newBuilder(router.uri("/v1/chat/completions"))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()));
        }
        for (var f : all) {
            assertThat(f.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }

        assertThat(a.connectionsAccepted()).isEqualTo(6);
        org.awaitility.Awaitility.await().untilAsserted(() -> assertThat(router.backend("a").idleConnections()).isEqualTo(2));
    }

    @Test
    void relaysUpstreamErrorStatusesAndBodies() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        a.enqueue(Reply.status(422, "{\"error\":{\"message\":\"bad prompt\"}}"));

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(422);
        assertThat(res.body()).contains("bad prompt");
    }

    @Test
    void answersOpenAiErrorsForBadRequests() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());

        HttpResponse<String> badJson = router.post("/v1/chat/completions", "{\"model\":\"m\",");
        assertThat(badJson.statusCode()).isEqualTo(400);
        assertThat(badJson.body()).contains("\"type\":\"invalid_request_error\"").contains("\"param\":null");

        HttpResponse<String> noModel = router.post("/v1/chat/completions", "{\"messages\":[]}");
        assertThat(noModel.statusCode()).isEqualTo(400);
        assertThat(noModel.body()).contains("model");

        HttpResponse<String> unknownModel = router.chat("nope");
        assertThat(unknownModel.statusCode()).isEqualTo(404);
        assertThat(unknownModel.body()).contains("\"code\":\"model_not_found\"");

        HttpResponse<String> unknownRoute = router.post("/v1/embeddingz", "{}");
        assertThat(unknownRoute.statusCode()).isEqualTo(404);
        assertThat(unknownRoute.body()).contains("\"error\":{");

        HttpResponse<String> wrongMethod = router.get("/v1/chat/completions");
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("allow")).hasValue("POST");

        assertThat(a.completionCount()).isZero();
    }

    @Test
    void listsTheModelsOfRoutableClientFacingBackends() throws Exception {
        try (TestUpstream any = TestUpstream.start("any").models("reported-1", "reported-2");
             TestUpstream internal = TestUpstream.start("internal");
             TestUpstream disabled = TestUpstream.start("disabled")) {
            ConfigBuilder cfg = ConfigBuilder.create()
                    .backend("a", a.baseUrl(), "m", "shared")
                    .backend(ConfigBuilder.backendConfig("any", any.baseUrl(), 1, null, null, true, false))
                    .backend(ConfigBuilder.backendConfig("internal", internal.baseUrl(), 1, null, null, true, true, "secret"))
                    .backend(ConfigBuilder.backendConfig("disabled", disabled.baseUrl(), 1, null, null, false, false, "off"))
                    .health(java.time.Duration.ofMillis(100), 1, 1);
            router = harness.start(cfg.build());
            org.awaitility.Awaitility.await().until(() -> !router.backend("any").reportedModels().isEmpty());

            HttpResponse<String> res = router.get("/v1/models");

            assertThat(res.statusCode()).isEqualTo(200);
            com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(res.body());
            assertThat(json.get("object").asText()).isEqualTo("list");
            List<String> ids = new java.util.ArrayList<>();
            json.get("data").forEach(m -> {
                ids.add(m.get("id").asText());
                assertThat(m.get("object").asText()).isEqualTo("model");
                assertThat(m.has("created")).isTrue();
                assertThat(m.has("owned_by")).isTrue();
            });
            assertThat(ids).containsExactly("m", "reported-1", "reported-2", "shared");
        }
    }
}
