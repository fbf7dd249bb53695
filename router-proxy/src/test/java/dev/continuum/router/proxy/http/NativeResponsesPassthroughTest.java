package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import dev.continuum.router.core.config.ResponsesApi;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /v1/responses} to backends configured {@code responses_api: native}, through the real server and real
 * upstreams, with a hook that pins every send (a fresh worker ID each time) and offers a {@code nvext.token_data}
 * body: the client's body goes unconverted to the native backend's {@code /v1/responses} (client routing fields
 * removed, the router's pin headers set), the hook is told it is not a chat body, the plan's body is never sent,
 * the answer (buffered or streamed) reaches the client byte for byte, a retry is pinned afresh, and a model that
 * no native backend serves is still converted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NativeResponsesPassthroughTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PIN = "x-dynamo-worker-instance-id";
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("native").upstream("failing")
            .upstream("plain").build();
    private final TestUpstream nativeUp = harness.upstream("native");
    private final TestUpstream failing = harness.upstream("failing");
    private final TestUpstream plain = harness.upstream("plain");
    private final List<DispatchRequest> hookSaw = new CopyOnWriteArrayList<>();
    private final AtomicInteger pins = new AtomicInteger();
    private RouterHarness router;

    private static BackendConfig backend(String name, URI url, ResponsesApi api, String... models) {
        return new BackendConfig(name, BackendType.OPENAI, url, List.of(models), BackendRole.UNIFIED, 1, null, null,
                true, false, api, null);
    }

    @BeforeAll
    void start() {
        router = harness.start(ConfigBuilder.create()
                        .backend(backend("native", nativeUp.baseUrl(), ResponsesApi.NATIVE, "m", "r"))
                        .backend(backend("failing", failing.baseUrl(), ResponsesApi.NATIVE, "r"))
                        .backend(backend("plain", plain.baseUrl(), ResponsesApi.CONVERTED, "m", "c"))
                        .disaggregated(false).build(),
                s -> s.proxyOptions(Ingresses.standard(ProxyOptions.defaults(), new EstimatedTokens())));
        router.server.proxy().dispatchHook(req -> {
            // Copy what the test reads: the body is borrowed for the call only.
            hookSaw.add(req.withBody(io.netty.buffer.Unpooled.copiedBuffer(req.body())));
            return new DispatchPlan(req.usableBackends(), Map.of(PIN, String.valueOf(pins.incrementAndGet())),
                    Map.of(), "pinned", "refused", "refused_code", o -> { })
                    .withPinnedBody("{\"nvext\":{\"token_data\":[1,2,3]}}".getBytes(StandardCharsets.UTF_8));
        });
    }

    @BeforeEach
    void reset() {
        hookSaw.clear();
        nativeUp.clearRecorded();
        failing.clearRecorded();
        plain.clearRecorded();
    }

    private static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    @Test
    void aNativeBackendGetsTheClientsBodyUnconvertedPinnedByModelAlone() throws Exception {
        String answer = "{\"id\":\"resp_native\",\"object\":\"response\",\"status\":\"completed\",\"output\":[]}";
        nativeUp.defaultReply(Reply.fixed(200, "application/json", answer, Map.of()));
        // previous_response_id is refused by the converter; a native backend takes it.
        String sent = "{\"model\":\"m\",\"input\":\"hi\",\"previous_response_id\":\"resp_1\",\"store\":true,"
                + "\"nvext\":{\"token_data\":[9,9],\"backend_instance_id\":5,\"annotations\":[\"a\"]}}";
        HttpResponse<String> r = router.post("/v1/responses?trace=1", sent, PIN, "99", "x-dynamo-dp-rank", "3");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(answer);
        assertThat(nativeUp.requests()).singleElement().satisfies(q -> {
            assertThat(q.uri()).isEqualTo("/v1/responses?trace=1");
            assertThat(json(q.body())).isEqualTo(json("{\"model\":\"m\",\"input\":\"hi\","
                    + "\"previous_response_id\":\"resp_1\",\"store\":true,\"nvext\":{\"annotations\":[\"a\"]}}"));
            assertThat(q.header(PIN)).isEqualTo(String.valueOf(pins.get())); // the hook's, asked once
            assertThat(q.hasHeader("x-dynamo-dp-rank")).isFalse();
        });
        assertThat(plain.requests()).isEmpty();
        assertThat(hookSaw).singleElement().satisfies(d -> {
            assertThat(d.chatBody()).isFalse();
            assertThat(d.model()).isEqualTo("m");
            assertThat(d.usableBackends()).containsExactly("native");
        });
    }

    @Test
    void aNativeStreamReachesTheClientByteForByte() throws Exception {
        String events = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\n"
                + "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\","
                + "\"sequence_number\":1}\n\n"
                + "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2}\n\n";
        nativeUp.defaultReply(Reply.fixed(200, "text/event-stream", events, Map.of()));
        HttpResponse<String> r = router.post("/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"stream\":true}");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream");
        assertThat(r.body()).isEqualTo(events);
        assertThat(hookSaw).singleElement().satisfies(d -> assertThat(d.stream()).isTrue());
        assertThat(nativeUp.requests()).singleElement().satisfies(q ->
                assertThat(q.body()).doesNotContain("token_data"));
    }

    @Test
    void aRetryOnTheNativePathIsPinnedAfresh() {
        failing.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        nativeUp.defaultReply(Reply.echo());
        // Round robin: at least one of two requests tries the failing replica first and is retried on the other.
        for (int i = 0; i < 2; i++) {
            assertThat(router.post("/v1/responses", "{\"model\":\"r\",\"input\":\"hi\"}").statusCode()).isEqualTo(200);
        }
        List<RecordedRequest> failed = failing.requests();
        assertThat(failed).isNotEmpty().allSatisfy(q -> assertThat(q.path()).isEqualTo("/v1/responses"));
        // One plan per request, and one more for each retry, narrowed to the replica the retry went to.
        assertThat(hookSaw).hasSize(2 + failed.size()).allSatisfy(d -> assertThat(d.chatBody()).isFalse());
        assertThat(hookSaw).filteredOn(d -> d.usableBackends().equals(List.of("native"))).hasSize(failed.size());
        List<String> served = nativeUp.requests().stream().map(q -> q.header(PIN)).toList();
        assertThat(served).hasSize(2).doesNotHaveDuplicates()
                .doesNotContainAnyElementsOf(failed.stream().map(q -> q.header(PIN)).toList());
    }

    @Test
    void aModelNoNativeBackendServesIsConverted() throws Exception {
        plain.defaultReply(Reply.fixed(200, "application/json", "{\"id\":\"c1\",\"object\":\"chat.completion\","
                + "\"created\":1,\"model\":\"c\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}", Map.of()));
        HttpResponse<String> r = router.post("/v1/responses", "{\"model\":\"c\",\"input\":\"hi\"}");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(json(r.body()).path("object").asText()).isEqualTo("response");
        assertThat(plain.requests()).singleElement().satisfies(q -> {
            assertThat(q.path()).isEqualTo("/v1/chat/completions");
            assertThat(json(q.body()).path("nvext").path("token_data")).hasSize(3); // a chat body keeps the plan's
        });
        assertThat(hookSaw).singleElement().satisfies(d -> assertThat(d.chatBody()).isTrue());
        assertThat(nativeUp.requests()).isEmpty();
    }

    @Test
    void aBodyThatCannotBeReadIsRefusedBeforeAnyBackend() throws Exception {
        HttpResponse<String> r = router.post("/v1/responses", "{\"model\":\"m\",\"input\":");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r.body()).path("error").path("message").asText()).contains("not valid JSON");
        assertThat(nativeUp.requests()).isEmpty();
        assertThat(plain.requests()).isEmpty();
    }
}
