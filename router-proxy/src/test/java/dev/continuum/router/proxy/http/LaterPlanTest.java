package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A dispatch hook that answers {@link DispatchHook.Later}, through the real server and real upstreams (one
 * router for the class): the exchange waits off nothing, resumes on its loop, sends the plan's own body on the
 * plan's path only, and a client leaving while the plan is made releases everything (the Netty leak detector runs
 * after every test) and ends the late plan as abandoned.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LaterPlanTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BODY = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static final String PINNED = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"nvext\":{\"token_data\":[1,2,3]}}";
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;
    private final List<DispatchPlan.Outcome> outcomes = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<@Nullable DispatchPlan>> pending = new CopyOnWriteArrayList<>();

    @BeforeAll
    void start() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .disaggregated(true).build());
    }

    @BeforeEach
    void reset() {
        outcomes.clear();
        pending.clear();
        a.clearRecorded();
        b.clearRecorded();
    }

    private DispatchPlan plan() {
        return new DispatchPlan(List.of("a"), Map.of("x-dynamo-worker-instance-id", "7"), Map.of(), "pinned",
                "refused by the shim", "pin_refused", outcomes::add)
                .withPinnedBody(PINNED.getBytes(StandardCharsets.UTF_8));
    }

    private static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    @Test
    void aLatePlanSendsItsBodyOnItsPathAndTheFallbackSendsTheRequestsOwn() throws Exception {
        // Completed on another thread, as an encoder's pool would.
        router.server.proxy().dispatchHook(req -> new DispatchHook.Later(
                CompletableFuture.supplyAsync(this::plan, CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS))));
        a.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"boom\"}}"));
        b.defaultReply(Reply.echo());

        HttpResponse<String> res = router.post("/v1/chat/completions", BODY);

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
        RecordedRequest pinned = a.completionRequests().get(0);
        assertThat(json(pinned.body())).isEqualTo(json(PINNED));
        assertThat(pinned.headers()).containsEntry("x-dynamo-worker-instance-id", List.of("7"));
        assertThat(pinned.headers()).containsEntry("content-length", List.of(Integer.toString(PINNED.length())));
        RecordedRequest fallback = b.completionRequests().get(0);
        assertThat(json(fallback.body())).isEqualTo(json(BODY));
        assertThat(fallback.headers()).doesNotContainKey("x-dynamo-worker-instance-id");
        assertThat(outcomes).containsExactly(DispatchPlan.Outcome.FELL_BACK);
    }

    @Test
    void thePlansDecisionIdGoesUpstreamOnItsPathOnlyAndAClientsIsDropped() throws Exception {
        router.server.proxy().dispatchHook(req -> new DispatchHook.Later(
                CompletableFuture.completedFuture(plan().withDecisionId("41"))));
        a.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"boom\"}}"));
        b.defaultReply(Reply.echo());

        HttpResponse<String> res = router.post("/v1/chat/completions", BODY, "x-continuum-decision-id", "999");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("x-continuum-decision-id")).hasValue("41");
        assertThat(a.completionRequests().get(0).headers()).containsEntry("x-continuum-decision-id", List.of("41"));
        // After the fallback, standard routing made no decision: no id goes upstream, and never the client's.
        assertThat(b.completionRequests().get(0).headers()).doesNotContainKey("x-continuum-decision-id");
    }

    @Test
    void aLaterThatFailsOrGivesNoPlanTakesStandardRouting() {
        b.defaultReply(Reply.echo());
        a.defaultReply(Reply.echo());
        router.server.proxy().dispatchHook(req -> new DispatchHook.Later(
                CompletableFuture.failedFuture(new IllegalStateException("encoder gone"))));
        assertThat(router.post("/v1/chat/completions", BODY).statusCode()).isEqualTo(200);

        router.server.proxy().dispatchHook(req -> new DispatchHook.Later(CompletableFuture.completedFuture(null)));
        HttpResponse<String> res = router.post("/v1/chat/completions", BODY);

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        assertThat(a.completionCount() + b.completionCount()).isEqualTo(2);
    }

    @Test
    void aClientLeavingWhileThePlanIsMadeReleasesTheRequestAndTheLatePlanIsAbandoned() throws Exception {
        router.server.proxy().dispatchHook(req -> {
            CompletableFuture<@Nullable DispatchPlan> f = new CompletableFuture<>();
            pending.add(f);
            return new DispatchHook.Later(f);
        });
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket("127.0.0.1", router.port)) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    + "content-length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> pending.size() == 1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> connections() == 0);

        pending.get(0).complete(plan());

        await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.equals(List.of(DispatchPlan.Outcome.ABANDONED)));
        assertThat(a.completionCount() + b.completionCount()).isZero();
    }

    private double connections() {
        var g = router.registry.find(IngressMetrics.CONNECTIONS).gauge();
        return g == null ? -1 : g.value();
    }
}
