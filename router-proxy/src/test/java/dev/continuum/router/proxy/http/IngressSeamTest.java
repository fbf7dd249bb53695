package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.metrics.Endpoint;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.ProxyRoute;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ingress seam through the real server and real upstreams: a toy wire ({@link EchoWireConverter}) bound
 * to {@code /echo} is converted to a chat completion before dispatch and back on the way out, buffered,
 * streamed and as errors, and the dispatch hook sees (and every attempt sends) the converted body.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IngressSeamTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ProxyRoute ECHO = ProxyRoute.converted("/echo", Endpoint.OTHER, new EchoWireConverter());
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    private void start(ConfigBuilder config) {
        router = harness.start(config.build(), s -> s.proxyOptions(ProxyOptions.defaults().withIngress(ECHO)));
    }

    private static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    @Test
    void convertsABufferedRequestAndItsAnswer() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m"));
        a.defaultReply(Reply.echo());

        HttpResponse<String> res = router.post("/echo?x=1", "{\"model\":\"m\",\"say\":\"hello\"}");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(json(res.body())).isEqualTo(json("{\"echo\":\"hello from a\"}"));
        assertThat(res.headers().firstValueAsLong("content-length")).hasValue(res.body().getBytes(StandardCharsets.UTF_8).length);
        assertThat(res.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        RecordedRequest sent = a.completionRequests().get(0);
        assertThat(sent.uri()).isEqualTo("/v1/chat/completions");
        assertThat(json(sent.body())).isEqualTo(json(
                "{\"model\":\"m\",\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"));
    }

    @Test
    void convertsAStreamEventByEvent() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m"));
        a.defaultReply(Reply.sse(List.of(
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"llo\"}}]}")));

        HttpResponse<String> res = router.post("/echo", "{\"model\":\"m\",\"say\":\"hi\",\"stream\":true}");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(res.headers().firstValue("content-length")).isEmpty();
        assertThat(res.body()).isEqualTo("event: piece\ndata: {\"text\":\"he\"}\n\n"
                + "event: piece\ndata: {\"text\":\"llo\"}\n\n"
                + "event: end\ndata: {\"pieces\":2}\n\n");
        assertThat(json(a.completionRequests().get(0).body()).get("stream").asBoolean()).isTrue();
    }

    @Test
    void convertsAWholeAnswerToAStreamRequestWhenTheUpstreamDoesNotStream() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m"));
        a.defaultReply(Reply.echo()); // JSON, whatever the request asked

        HttpResponse<String> res = router.post("/echo", "{\"model\":\"m\",\"say\":\"hi\",\"stream\":true}");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(json(res.body())).isEqualTo(json("{\"echo\":\"hello from a\"}"));
    }

    @Test
    void answersTheRoutersOwnErrorsInTheIngressShape() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m"));

        HttpResponse<String> unknownModel = router.post("/echo", "{\"model\":\"nope\",\"say\":\"x\"}");
        HttpResponse<String> notThisWire = router.post("/echo", "{\"model\":\"m\",\"messages\":[]}");

        assertThat(unknownModel.statusCode()).isEqualTo(404);
        assertThat(json(unknownModel.body()).path("echo_error").path("status").asInt()).isEqualTo(404);
        assertThat(json(unknownModel.body()).path("echo_error").path("message").asText()).contains("nope");
        assertThat(notThisWire.statusCode()).isEqualTo(400);
        assertThat(json(notThisWire.body()).path("echo_error").path("message").asText()).isEqualTo("'say' must be a string.");
        assertThat(a.completionCount()).isZero();
    }

    @Test
    void convertsAnUpstreamErrorAnswer() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").noRetry());
        a.defaultReply(Reply.status(400, "{\"error\":{\"message\":\"bad prompt\",\"type\":\"invalid_request_error\"}}"));

        HttpResponse<String> buffered = router.post("/echo", "{\"model\":\"m\",\"say\":\"x\"}");
        HttpResponse<String> streamed = router.post("/echo", "{\"model\":\"m\",\"say\":\"x\",\"stream\":true}");

        for (HttpResponse<String> res : List.of(buffered, streamed)) {
            assertThat(res.statusCode()).isEqualTo(400);
            assertThat(json(res.body())).isEqualTo(json("{\"echo_error\":{\"status\":400,\"message\":\"bad prompt\"}}"));
        }
    }

    @Test
    void leavesTheOpenAiRoutesUntouched() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m"));
        a.defaultReply(Reply.echo());

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(json(res.body()).path("choices").path(0).path("message").path("content").asText())
                .isEqualTo("hello from a");
    }

    @Test
    void theDispatchHookSeesTheConvertedBodyAndEveryAttemptSendsIt() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true));
        List<String> seen = new CopyOnWriteArrayList<>();
        List<DispatchPlan.Outcome> outcomes = new CopyOnWriteArrayList<>();
        DispatchHook hook = req -> {
            seen.add(req.body().toString(StandardCharsets.UTF_8));
            return new DispatchPlan(List.of("a"), Map.of("x-dynamo-worker-instance-id", "7"), Map.of(), "pinned",
                    "refused by the shim", "pin_refused", outcomes::add);
        };
        router.server.proxy().dispatchHook(hook);
        // The pinned path fails (a 500 is not retried on the plan's one backend), the fallback serves unpinned.
        a.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"boom\"}}"));
        b.defaultReply(Reply.echo());

        HttpResponse<String> res = router.post("/echo",
                "{\"model\":\"m\",\"say\":\"hello\",\"nvext\":{\"backend_instance_id\":1,\"keep\":true}}");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(json(res.body())).isEqualTo(json("{\"echo\":\"hello from b\"}"));
        assertThat(res.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
        String converted = "{\"model\":\"m\",\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],"
                + "\"nvext\":{\"keep\":true}}";
        assertThat(seen).hasSize(1);
        assertThat(json(seen.get(0))).isEqualTo(json(converted));
        RecordedRequest pinned = a.completionRequests().get(0);
        RecordedRequest fallback = b.completionRequests().get(0);
        assertThat(json(pinned.body())).isEqualTo(json(converted));
        assertThat(pinned.headers()).containsEntry("x-dynamo-worker-instance-id", List.of("7"));
        assertThat(json(fallback.body())).isEqualTo(json(converted));
        assertThat(fallback.headers()).doesNotContainKey("x-dynamo-worker-instance-id");
        assertThat(outcomes).containsExactly(DispatchPlan.Outcome.FELL_BACK);
    }

    @Test
    void aRetryOnThePlansPathIsANewSendWithAFreshPlanNarrowedToItsBackend() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true));
        List<DispatchPlan.Outcome> outcomes = new CopyOnWriteArrayList<>();
        List<List<String>> asked = new CopyOnWriteArrayList<>();
        List<Boolean> resends = new CopyOnWriteArrayList<>();
        router.server.proxy().dispatchHook(req -> {
            asked.add(req.usableBackends());
            resends.add(req.resend());
            return new DispatchPlan(req.usableBackends(), Map.of("x-dynamo-worker-instance-id", "" + asked.size()),
                    Map.of(), "pinned", "refused by the shim", "pin_refused", outcomes::add);
        });
        a.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        b.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));

        HttpResponse<String> first = router.post("/echo", "{\"model\":\"m\",\"say\":\"hello\"}");
        // Whichever backend took the first attempt answered 503; the retry went to the other one.
        assertThat(first.statusCode()).isEqualTo(502);
        List<RecordedRequest> sent = new java.util.ArrayList<>(a.completionRequests());
        sent.addAll(b.completionRequests());
        assertThat(sent).hasSize(2);
        for (RecordedRequest r : sent) {
            assertThat(json(r.body())).isEqualTo(json(
                    "{\"model\":\"m\",\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"));
        }
        // The first send's plan chose among both; the retry's was asked for the one backend it went to, and
        // each send carried its own plan's pin.
        assertThat(asked).hasSize(2);
        assertThat(asked.get(0)).containsExactly("a", "b");
        assertThat(asked.get(1)).hasSize(1);
        assertThat(resends).as("the retry's ask is marked as a resend").containsExactly(false, true);
        TestUpstream retried = asked.get(1).get(0).equals("a") ? a : b;
        assertThat(retried.completionRequests().get(0).headers()).containsEntry("x-dynamo-worker-instance-id", List.of("2"));
        assertThat((retried == a ? b : a).completionRequests().get(0).headers())
                .containsEntry("x-dynamo-worker-instance-id", List.of("1"));
        assertThat(outcomes).containsExactly(DispatchPlan.Outcome.RESENT, DispatchPlan.Outcome.FAILED);
    }

    /** A hook that answers {@link DispatchHook.Later} with a future the test completes. */
    private final List<CompletableFuture<@Nullable DispatchPlan>> pending = new CopyOnWriteArrayList<>();
    private final List<DispatchPlan.Outcome> outcomes = new CopyOnWriteArrayList<>();

    private void laterHook() {
        router.server.proxy().dispatchHook(req -> {
            CompletableFuture<@Nullable DispatchPlan> f = new CompletableFuture<>();
            pending.add(f);
            return new DispatchHook.Later(f);
        });
    }

    private DispatchPlan plan(List<String> backends, String pin) {
        return new DispatchPlan(backends, Map.of("x-dynamo-worker-instance-id", pin), Map.of(), "pinned",
                "refused by the shim", "pin_refused", outcomes::add);
    }

    @Test
    void aRetryWaitsForItsFreshPlanWhenTheHookAnswersLater() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true));
        laterHook();
        a.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        b.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));

        CompletableFuture<HttpResponse<String>> res = CompletableFuture.supplyAsync(
                () -> router.post("/echo", "{\"model\":\"m\",\"say\":\"hello\"}"));
        await().atMost(Duration.ofSeconds(10)).until(() -> pending.size() == 1);
        pending.get(0).complete(plan(List.of("a", "b"), "1"));
        // The first send answered 503; its retry asks again and sends nothing until that plan is made.
        await().atMost(Duration.ofSeconds(10)).until(() -> pending.size() == 2);
        TestUpstream first = a.completionCount() == 1 ? a : b;
        TestUpstream retried = first == a ? b : a;
        assertThat(retried.completionCount()).isZero();
        assertThat(res).isNotDone();
        pending.get(1).complete(plan(List.of(retried.name()), "2"));

        assertThat(res.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(502);
        assertThat(first.completionRequests().get(0).headers()).containsEntry("x-dynamo-worker-instance-id", List.of("1"));
        assertThat(retried.completionRequests()).singleElement().satisfies(r ->
                assertThat(r.headers()).containsEntry("x-dynamo-worker-instance-id", List.of("2")));
        assertThat(outcomes).containsExactly(DispatchPlan.Outcome.RESENT, DispatchPlan.Outcome.FAILED);
    }

    @Test
    void aRetrysPlanThatArrivesAfterTheClientLeftIsAbandoned() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true));
        laterHook();
        a.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        b.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        byte[] body = "{\"model\":\"m\",\"say\":\"hello\"}".getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket("127.0.0.1", router.port)) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    + "content-length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> pending.size() == 1);
            pending.get(0).complete(plan(List.of("a", "b"), "1"));
            await().atMost(Duration.ofSeconds(10)).until(() -> pending.size() == 2);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.equals(List.of(DispatchPlan.Outcome.ABANDONED)));

        pending.get(1).complete(plan(List.of("a", "b"), "2"));

        await().atMost(Duration.ofSeconds(10)).until(() ->
                outcomes.equals(List.of(DispatchPlan.Outcome.ABANDONED, DispatchPlan.Outcome.ABANDONED)));
        assertThat(a.completionCount() + b.completionCount()).as("the retry was never sent").isEqualTo(1);
    }

    @Test
    void theChatRouteKeepsItsOnePlanOnARetry() throws Exception {
        start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true));
        List<DispatchPlan.Outcome> outcomes = new CopyOnWriteArrayList<>();
        router.server.proxy().dispatchHook(req -> new DispatchPlan(List.of("a", "b"),
                Map.of("x-dynamo-worker-instance-id", "7"), Map.of(), "pinned", "refused by the shim", "pin_refused",
                outcomes::add));
        a.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        b.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));

        assertThat(router.chat("m").statusCode()).isEqualTo(502);
        List<RecordedRequest> sent = new java.util.ArrayList<>(a.completionRequests());
        sent.addAll(b.completionRequests());
        assertThat(sent).hasSize(2).allSatisfy(r ->
                assertThat(r.headers()).containsEntry("x-dynamo-worker-instance-id", List.of("7")));
        assertThat(outcomes).containsExactly(DispatchPlan.Outcome.FAILED);
    }

    @Test
    void refusesAnIngressOnATakenPath() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ProxyOptions.defaults()
                        .withIngress(ProxyRoute.converted("/v1/chat/completions", Endpoint.OTHER, new EchoWireConverter())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/v1/chat/completions");
    }
}
