package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The router's Anthropic Messages and Responses routes through the real server, a real upstream and a test hook
 * that pins every send: the refusal mapping of docs/ingresses.md on both ingresses (buffered and at a stream's head), the
 * router's own errors in each wire's shape, count_tokens answered without a dispatch, and the compact
 * passthrough forwarded as sent and never pinned.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConvertedIngressesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String REFUSAL = "Prefill worker ID required in Direct routing mode";
    private static final String CODE = "disaggregated_prefill_decode_unavailable";
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("shim").build();
    private final TestUpstream shim = harness.upstream("shim");
    private final List<String> hookSaw = new CopyOnWriteArrayList<>();
    private RouterHarness router;

    @BeforeAll
    void start() {
        router = harness.start(ConfigBuilder.create().backend("shim", shim.baseUrl(), "m").noRetry()
                        .disaggregated(false).build(),
                s -> s.proxyOptions(Ingresses.standard(ProxyOptions.defaults(), new EstimatedTokens())));
        router.server.proxy().dispatchHook(req -> {
            hookSaw.add(req.body().toString(java.nio.charset.StandardCharsets.UTF_8));
            return new DispatchPlan(List.of("shim"), Map.of("x-dynamo-worker-instance-id", "7"), Map.of(), "pinned",
                    REFUSAL, CODE, o -> { });
        });
    }

    @BeforeEach
    void reset() {
        hookSaw.clear();
        shim.clearRecorded();
    }

    private static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    @Test
    void aRefusedPinIs503InEachWiresShapeBufferedAndAtAStreamsHead() throws Exception {
        shim.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"" + REFUSAL + " but none found\"}}"));
        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> m = router.post("/v1/messages", "{\"model\":\"m\",\"max_tokens\":4,\"stream\":" + stream
                    + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            assertThat(m.statusCode()).isEqualTo(503);
            JsonNode err = json(m.body());
            assertThat(err.path("type").asText()).isEqualTo("error");
            assertThat(err.path("error").path("type").asText()).isEqualTo("api_error");
            assertThat(err.path("error").path("message").asText()).endsWith(CODE);

            HttpResponse<String> r = router.post("/v1/responses", "{\"model\":\"m\",\"stream\":" + stream
                    + ",\"input\":\"hi\"}");
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(json(r.body()).path("error").path("code").asText()).isEqualTo(CODE);
        }
        assertThat(shim.completionRequests()).hasSize(4).allSatisfy(q ->
                assertThat(q.header("x-dynamo-worker-instance-id")).isEqualTo("7"));
    }

    @Test
    void theRoutersOwnErrorsAreInEachWiresShape() throws Exception {
        HttpResponse<String> unknown = router.post("/v1/messages", "{\"model\":\"nope\",\"max_tokens\":4,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown.body()).path("error").path("type").asText()).isEqualTo("not_found_error");
        HttpResponse<String> bad = router.post("/v1/messages", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"document\"}]}],\"max_tokens\":4}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad.body()).path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(json(bad.body()).path("error").path("message").asText()).startsWith("messages.0.content.0.type:");
        HttpResponse<String> stored = router.post("/v1/responses", "{\"model\":\"m\",\"input\":\"hi\","
                + "\"previous_response_id\":\"resp_1\"}");
        assertThat(stored.statusCode()).isEqualTo(400);
        assertThat(json(stored.body()).path("error").path("message").asText()).startsWith("previous_response_id:");
        assertThat(shim.completionCount()).isZero();
    }

    @Test
    void wrongTypesAndTrailingBytesAre400sInEachWiresEnvelopeOnEveryJsonIngress() throws Exception {
        String messages = "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"text\",\"text\":5}]}]}";
        HttpResponse<String> m = router.post("/v1/messages", messages);
        assertThat(m.statusCode()).isEqualTo(400);
        assertThat(json(m.body()).path("type").asText()).isEqualTo("error");
        assertThat(json(m.body()).path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(json(m.body()).path("error").path("message").asText())
                .startsWith("messages.0.content.0.text: expected a string.");
        HttpResponse<String> r = router.post("/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"reasoning\":5}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r.body()).path("error").path("message").asText()).isEqualTo("reasoning: expected an object.");
        assertThat(json(r.body()).path("error").path("type").asText()).isEqualTo("invalid_request_error");

        String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        String anthropic = "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        String responses = "{\"model\":\"m\",\"input\":\"hi\"}";
        for (String[] route : new String[][] {{"/v1/chat/completions", chat}, {"/v1/messages", anthropic},
                {"/v1/responses", responses}, {"/v1/messages/count_tokens", anthropic}}) {
            for (String tail : new String[] {route[1], " {}", " x"}) {
                HttpResponse<String> t = router.post(route[0], route[1] + tail);
                assertThat(t.statusCode()).as(route[0] + tail).isEqualTo(400);
                JsonNode err = json(t.body());
                if (route[0].startsWith("/v1/messages")) {
                    assertThat(err.path("type").asText()).isEqualTo("error");
                    assertThat(err.path("error").path("type").asText()).isEqualTo("invalid_request_error");
                } else {
                    assertThat(err.path("error").path("message").asText()).as(route[0]).isNotEmpty();
                }
            }
        }
        assertThat(shim.completionCount()).isZero();
    }

    @Test
    void countTokensIsAnsweredWithoutADispatch() throws Exception {
        HttpResponse<String> r = router.post("/v1/messages/count_tokens", "{\"model\":\"m\",\"system\":\"Be brief.\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"one two three four five\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        // Five words, 23 characters: max(ceil(23 / 4), 5) = 6; "Be brief." adds max(3, 2) = 3.
        assertThat(json(r.body())).isEqualTo(json("{\"input_tokens\":9}"));
        HttpResponse<String> bad = router.post("/anthropic/v1/messages/count_tokens", "{\"model\":\"m\"}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad.body()).path("error").path("message").asText()).startsWith("messages:");
        assertThat(shim.requests()).isEmpty();
        assertThat(hookSaw).isEmpty();
    }

    @Test
    void theCompactPassthroughIsForwardedAsSentAndNeverPinned() throws Exception {
        shim.defaultReply(Reply.echo());
        String body = "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        router.post("/v1/responses/compact", body, "x-dynamo-worker-instance-id", "9");
        assertThat(shim.requests(q -> q.path().equals("/v1/responses/compact"))).singleElement().satisfies(q -> {
            assertThat(json(q.body())).isEqualTo(json(body));
            assertThat(q.headers().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"));
        });
        assertThat(hookSaw).isEmpty();
    }
}
