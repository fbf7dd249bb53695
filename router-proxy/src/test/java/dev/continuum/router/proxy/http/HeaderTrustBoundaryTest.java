package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeaderTrustBoundaryTest {
    /** Every spelling a client could use to pin a worker, plus the tenant header that must survive. */
    private static final String[] CLIENT_HEADERS = {
        "X-Dynamo-Worker-Instance-Id", "1",
        "x-dynamo-prefill-instance-id", "2",
        "X-DYNAMO-DP-RANK", "0",
        "x-dynamo-anything-else", "3",
        "x-worker-instance-id", "4",
        "X-Prefill-Instance-Id", "5",
        "x-dp-rank", "6",
        "x-data-parallel-rank", "7",
        "x-prefill-dp-rank", "8",
        "X-Continuum-Decision-Id", "9",
        "x-tenant-id", "tenant-1"};

    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    private final List<HttpHeaders> localSeen = new CopyOnWriteArrayList<>();
    private RouterHarness router;

    private static void assertStripped(Map<String, List<String>> headers) {
        assertThat(headers.keySet()).noneMatch(h -> h.startsWith("x-dynamo-"))
                .doesNotContain("x-worker-instance-id", "x-prefill-instance-id", "x-dp-rank",
                        "x-data-parallel-rank", "x-prefill-dp-rank", "x-continuum-decision-id")
                .contains("x-tenant-id");
    }

    @Test
    void stripsPinningHeadersOnEveryRoute() {
        LocalRoute recorder = req -> {
            localSeen.add(req.headers());
            return CompletableFuture.completedFuture(LocalResponse.text(200, "ok"));
        };
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                s -> s.routeExact("/health", recorder).routePrefix("/admin/", recorder));

        router.chat("m", CLIENT_HEADERS);
        router.post("/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\"}", CLIENT_HEADERS);
        assertThat(router.get("/v1/models", CLIENT_HEADERS).statusCode()).isEqualTo(200);
        assertThat(router.get("/health", CLIENT_HEADERS).statusCode()).isEqualTo(200);
        assertThat(router.get("/admin/x", CLIENT_HEADERS).statusCode()).isEqualTo(200);
        assertThat(router.get("/v1/unknown", CLIENT_HEADERS).statusCode()).isEqualTo(404);

        List<RecordedRequest> upstream = a.completionRequests();
        assertThat(upstream).hasSize(2);
        upstream.forEach(r -> assertStripped(r.headers()));
        assertThat(localSeen).hasSize(2);
        for (HttpHeaders h : localSeen) {
            Map<String, List<String>> m = new java.util.HashMap<>();
            h.forEach(e -> m.put(e.getKey().toLowerCase(java.util.Locale.ROOT), List.of(e.getValue())));
            assertStripped(m);
        }
    }

    @Test
    void stripsNvextRoutingFieldsFromTheBodyAndKeepsTheRest() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        String body = "{\"model\":\"m\",\"nvext\":{\"backend_instance_id\":1,\"prefill_worker_id\":2,"
                + "\"decode_worker_id\":3,\"dp_rank\":0,\"prefill_dp_rank\":0,\"token_data\":[1],"
                + "\"annotations\":[\"keep\"]},\"messages\":[]}";

        assertThat(router.post("/v1/chat/completions", body).statusCode()).isEqualTo(200);

        com.fasterxml.jackson.databind.JsonNode sent = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(a.completionRequests().get(0).body());
        assertThat(sent.get("nvext").fieldNames()).toIterable().containsExactly("annotations");
        assertThat(sent.get("model").asText()).isEqualTo("m");
        assertThat(sent.has("messages")).isTrue();
    }

    @Test
    void theBoundaryHandlerStripsBeforeAnyLaterHandlerReads() {
        EmbeddedChannel ch = new EmbeddedChannel(StripUntrustedHeadersHandler.INSTANCE);
        HttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/anything");
        for (int i = 0; i < CLIENT_HEADERS.length; i += 2) {
            req.headers().add(CLIENT_HEADERS[i], CLIENT_HEADERS[i + 1]);
        }

        ch.writeInbound(req);
        HttpRequest out = ch.readInbound();

        assertThat(out.headers().names()).containsExactly("x-tenant-id");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void neverRelaysContinuumHeadersAnUpstreamForged() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        a.defaultReply(Reply.fixed(200, "application/json", "{\"ok\":true}", Map.of(
                "x-continuum-worker-instance-id", "666",
                "X-Continuum-Backend", "forged",
                "x-continuum-routing-path", "forged",
                "x-continuum-anything", "forged")));

        HttpResponse<String> plain = router.chat("m");
        HttpResponse<String> disclosed = router.chat("m", "x-backend", "1");

        assertThat(plain.statusCode()).isEqualTo(200);
        assertThat(plain.headers().map().keySet()).filteredOn(h -> h.startsWith("x-continuum-"))
                .containsExactly("x-continuum-routing-path");
        assertThat(plain.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        // With x-backend the router discloses its own values, never the upstream's.
        assertThat(disclosed.headers().map().keySet()).filteredOn(h -> h.startsWith("x-continuum-"))
                .containsExactlyInAnyOrder("x-continuum-routing-path", "x-continuum-backend");
        assertThat(disclosed.headers().firstValue("x-continuum-backend")).hasValue("a");
    }
}
