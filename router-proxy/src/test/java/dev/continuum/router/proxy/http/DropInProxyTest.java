package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.VirtualTimer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Rust router's sections this build implements, each shown to act through a real router and real
 * upstreams: {@code timeouts}, the retry delay keys, {@code fallback}, {@code ConsistentHash}, per-backend
 * {@code health_check}, and the embeddings and rerank routes. One router and three upstreams serve every
 * test; each test applies its own config (as a reload does). Every config goes through the YAML loader, so a
 * key the binder drops fails here too. The proxy's timeouts and retry backoff run on a {@link VirtualTimer}:
 * a test reads which bound was armed and moves the time past it, never waiting for a real timer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DropInProxyTest {
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").upstream("c").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private final TestUpstream c = harness.upstream("c");
    private final VirtualTimer timer = new VirtualTimer();
    private final RouterHarness router = harness.start(load(""),
            b -> b.proxyOptions(ProxyOptions.defaults().withTimer(timer)));

    @BeforeEach
    void reset() {
        timer.advance(Duration.ofDays(1)); // whatever an earlier test left armed fires now, not during this one
        for (TestUpstream u : List.of(a, b, c)) {
            u.defaultReply(Reply.echo());
            u.clearRecorded();
        }
    }

    /** {@code yaml} after three backends (a, b and c serving model m; a also serves big, b small). */
    private RouterConfig load(String yaml) {
        String doc = """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: false}
                circuit_breaker: {enabled: false}
                backends:
                  - {name: a, url: "%s", models: [m, big]}
                  - {name: b, url: "%s", models: [m, small]}
                  - {name: c, url: "%s", models: [m]}
                """.formatted(a.baseUrl(), b.baseUrl(), c.baseUrl()) + yaml;
        return ConfigLoader.builder().build().loadString(doc).orThrow();
    }

    private void apply(String yaml) {
        router.server.apply(load(yaml));
    }

    private HttpResponse<String> chat(String model, String content, String... headers) {
        return router.post("/v1/chat/completions", "{\"model\":\"" + model
                + "\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\""
                + content + "\"}]}", headers);
    }

    private static int total(TestUpstream... us) {
        int n = 0;
        for (TestUpstream u : us) {
            n += u.completionCount();
        }
        return n;
    }

    // ------------------------------------------------------------------ timeouts

    private CompletableFuture<HttpResponse<String>> sendAsync(String body) {
        HttpRequest req = HttpRequest.newBuilder(router.uri("/v1/chat/completions")).timeout(Duration.ofSeconds(20))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return router.http.sendAsync(req, HttpResponse.BodyHandlers.ofString());
    }

    /** The request reached {@code u} (so its first-byte timer is armed) and the next bound is {@code bound}. */
    private void awaitArmed(TestUpstream u, int requests, Duration bound) {
        await().atMost(Duration.ofSeconds(10)).until(() -> u.completionCount() == requests);
        await().atMost(Duration.ofSeconds(10)).until(() -> timer.nextDue().equals(Optional.of(bound)));
    }

    private static final String PLAIN = "{\"model\":\"big\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static final String STREAM =
            "{\"model\":\"big\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    @Test
    void standardFirstByteTimeoutAnswers504BeforeTheSlowHead() throws Exception {
        apply("timeouts: {request: {standard: {first_byte: 200ms, total: 30s}}}\nretry: {enabled: false}");
        a.defaultReply(Reply.delayed(Duration.ofMinutes(10), Reply.echo()));
        CompletableFuture<HttpResponse<String>> r = sendAsync(PLAIN);

        awaitArmed(a, 1, Duration.ofMillis(200));
        timer.advance(Duration.ofMillis(199));
        assertThat(timer.nextDue()).as("not due a millisecond early").hasValue(Duration.ofMillis(1));
        timer.advance(Duration.ofMillis(1));

        assertThat(r.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(504);
        assertThat(r.get().body()).contains("200 ms");
    }

    @Test
    void standardTotalTimeoutBoundsAPlainRequest() throws Exception {
        apply("timeouts: {request: {standard: {total: 300ms}}}\nretry: {enabled: false}");
        a.defaultReply(Reply.delayed(Duration.ofMinutes(10), Reply.echo()));
        CompletableFuture<HttpResponse<String>> r = sendAsync(PLAIN);

        awaitArmed(a, 1, Duration.ofMillis(300));
        timer.advance(Duration.ofMillis(300));

        assertThat(r.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(504);
        assertThat(r.get().body()).contains("300 ms");
    }

    @Test
    void streamingFirstByteTimeoutAppliesToStreamsOnly() throws Exception {
        apply("timeouts: {request: {streaming: {first_byte: 200ms}}}\nretry: {enabled: false}");
        a.defaultReply(Reply.delayed(Duration.ofMinutes(10), Reply.sse(List.of("{\"x\":1}"))));

        CompletableFuture<HttpResponse<String>> stream = sendAsync(STREAM);
        awaitArmed(a, 1, Duration.ofMillis(200));
        timer.advance(Duration.ofMillis(200));
        assertThat(stream.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(504);

        CompletableFuture<HttpResponse<String>> plain = sendAsync(PLAIN);
        Duration requestTimeout = router.server.proxy().config().server().requestTimeout();
        awaitArmed(a, 2, requestTimeout);
        timer.advance(requestTimeout);
        assertThat(plain.get(10, TimeUnit.SECONDS).body()).as("a plain request keeps server.request_timeout")
                .contains(requestTimeout.toMillis() + " ms");
    }

    @Test
    void streamingTotalTimeoutCutsAStreamThatKeepsGoing() throws Exception {
        apply("timeouts: {request: {streaming: {first_byte: 200ms, total: 1s}}}\nretry: {enabled: false}");
        OpenStream open = openStream();
        StreamHandle h = open.handle();
        BufferedReader in = open.body();

        // Once the head is out, the first byte's bound gives way to the stream's total.
        await().atMost(Duration.ofSeconds(10)).until(() -> timer.nextDue().equals(Optional.of(Duration.ofSeconds(1))));
        timer.advance(Duration.ofMillis(500));
        h.send("{\"n\":2}");
        readUntil(in, "\"n\":2");
        assertThat(timer.nextDue()).as("a chunk does not move the total").hasValue(Duration.ofMillis(500));
        timer.advance(Duration.ofMillis(500));

        assertThat(h.awaitClosed(10_000)).as("upstream connection closed by the router").isTrue();
        assertThat(readRest(in)).doesNotContain("[DONE]");
    }

    @Test
    void chunkIntervalCutsAStreamThatGoesSilent() throws Exception {
        apply("timeouts: {request: {streaming: {chunk_interval: 300ms}}}\nretry: {enabled: false}");
        OpenStream open = openStream();
        StreamHandle h = open.handle();
        BufferedReader in = open.body();
        readUntil(in, "\"n\":1");
        await().atMost(Duration.ofSeconds(10)).until(() -> timer.nextDue().equals(Optional.of(Duration.ofMillis(300))));

        // A chunk within the interval moves the deadline: the watchdog re-arms for what is left after it.
        timer.advance(Duration.ofMillis(299));
        h.send("{\"n\":2}");
        readUntil(in, "\"n\":2");
        timer.advance(Duration.ofMillis(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> timer.nextDue().equals(Optional.of(Duration.ofMillis(299))));
        assertThat(h.isOpen()).isTrue();

        // No chunk for the whole interval: the router gives up on the upstream (idle_timeout is 60s).
        timer.advance(Duration.ofMillis(299));
        assertThat(h.awaitClosed(10_000)).as("upstream connection closed by the router").isTrue();
        assertThat(readRest(in)).doesNotContain("[DONE]");
    }

    /** The upstream's side of a stream and the client's body of it. */
    private record OpenStream(StreamHandle handle, BufferedReader body) {
    }

    /** A streamed request to a's controlled stream, its first chunk sent and the 200 head read. */
    private OpenStream openStream() throws Exception {
        a.defaultReply(Reply.controlledStream());
        CompletableFuture<HttpResponse<InputStream>> response = router.http.sendAsync(HttpRequest.newBuilder(
                        router.uri("/v1/chat/completions")).timeout(Duration.ofSeconds(20))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(STREAM)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        StreamHandle h = a.awaitStream(Duration.ofSeconds(10));
        h.send("{\"n\":1}");
        assertThat(response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        return new OpenStream(h, new BufferedReader(new InputStreamReader(response.get().body(), StandardCharsets.UTF_8)));
    }

    private static void readUntil(BufferedReader in, String wanted) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains(wanted)) {
                return;
            }
        }
        throw new AssertionError("stream ended before " + wanted);
    }

    /** What is left of a cut stream (the cut may also surface as an error of the chunked body). */
    private static String readRest(BufferedReader in) {
        StringBuilder sb = new StringBuilder();
        try (in) {
            String line;
            while ((line = in.readLine()) != null) {
                sb.append(line).append('\n');
            }
        } catch (IOException expected) {
            // the stream did not end normally
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ retry delays

    @Test
    void baseDelayHoldsTheRetry() throws Exception {
        apply("retry: {max_attempts: 2, base_delay: 10m, jitter: false}\nselection_strategy: LeastConnections");
        for (TestUpstream u : List.of(a, b, c)) {
            u.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));
        }
        CompletableFuture<HttpResponse<String>> pending = sendAsync("{\"model\":\"m\",\"messages\":[]}");

        await().atMost(Duration.ofSeconds(10)).until(() -> total(a, b, c) == 1);
        // The 503 cancelled the attempt's timer; the one thing armed is the retry's wait of base_delay.
        await().atMost(Duration.ofSeconds(10)).until(() -> timer.nextDue().equals(Optional.of(Duration.ofMinutes(10))));
        assertThat(timer.pending()).isEqualTo(1);
        timer.advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(total(a, b, c)).isEqualTo(1);
        assertThat(pending).isNotDone();

        timer.advance(Duration.ofMillis(1));

        assertThat(pending.get(10, TimeUnit.SECONDS).statusCode()).as("the retry's 503, relayed").isEqualTo(503);
        assertThat(total(a, b, c)).isEqualTo(2);
    }

    // ------------------------------------------------------------------ fallback

    @Test
    void aFailingModelFallsBackToItsChainWithAHeaderAndAMetric() {
        apply("""
                retry: {enabled: false}
                fallback:
                  fallback_chains: {big: [small]}
                  fallback_policy: {trigger_conditions: {error_codes: [503]}}
                """);
        a.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"));
        double before = counter("continuum_model_fallbacks_total{reason=\"error_code\"");

        HttpResponse<String> r = chat("big", "hello");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-continuum-fallback-model")).hasValue("small");
        List<RecordedRequest> served = b.completionRequests();
        assertThat(served).singleElement().satisfies(q -> assertThat(q.body()).contains("\"model\":\"small\"")
                .contains("be brief"));
        assertThat(counter("continuum_model_fallbacks_total{reason=\"error_code\"")).isEqualTo(before + 1);
    }

    @Test
    void aStatusOutsideTheTriggerConditionsIsRelayedAsIs() {
        apply("""
                retry: {enabled: false}
                fallback:
                  fallback_chains: {big: [small]}
                  fallback_policy: {trigger_conditions: {error_codes: [503]}}
                """);
        a.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"broken\"}}"));

        HttpResponse<String> r = chat("big", "hello");

        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.headers().firstValue("x-continuum-fallback-model")).isEmpty();
        assertThat(b.completionCount()).isZero();
    }

    @Test
    void anUnservedModelFallsBackOnlyWithModelNotFound() {
        apply("""
                fallback:
                  fallback_chains: {ghost: [small]}
                  fallback_policy: {trigger_conditions: {model_not_found: true}}
                """);
        assertThat(chat("ghost", "x").statusCode()).isEqualTo(200);
        assertThat(b.completionRequests()).singleElement().satisfies(q -> assertThat(q.body()).contains("\"small\""));

        apply("fallback: {fallback_chains: {ghost: [small]}}");
        assertThat(chat("ghost", "x").statusCode()).as("model_not_found is off by default").isEqualTo(404);
    }

    @Test
    void aModelWhoseOnlyBackendRefusesConnectionsFallsBackOnConnectionError() {
        apply("fallback: {fallback_chains: {big: [small]}}");
        a.stop();
        try {
            // Connection refused, retried nowhere (a alone serves big): connection_error triggers.
            HttpResponse<String> r = chat("big", "y");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-fallback-model")).hasValue("small");
        } finally {
            a.restart();
        }
    }

    // ------------------------------------------------------------------ ConsistentHash

    @Test
    void consistentHashOnAHeaderSticksEachSessionToOneBackend() {
        apply("selection_strategy: ConsistentHash\nconsistent_hash: {key: header, header: x-session-id}");
        Set<String> homes = new HashSet<>();
        for (int s = 0; s < 12; s++) {
            Set<String> used = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                HttpResponse<String> r = chat("m", "q" + i, "x-session-id", "session-" + s);
                assertThat(r.statusCode()).isEqualTo(200);
                used.add(servedBy());
            }
            assertThat(used).as("session %d", s).hasSize(1);
            homes.addAll(used);
        }
        assertThat(homes).as("sessions spread over the backends").hasSizeGreaterThan(1);
    }

    @Test
    void consistentHashOnTheFirstUserMessageKeepsAConversationTogether() {
        apply("selection_strategy: ConsistentHash\nconsistent_hash: {key: first_user_message}");
        Set<String> homes = new HashSet<>();
        for (int s = 0; s < 12; s++) {
            Set<String> used = new HashSet<>();
            for (int i = 0; i < 3; i++) {
                // Same first user message, growing conversation after it.
                String body = "{\"model\":\"m\",\"messages\":[{\"content\":\"topic " + s + "\",\"role\":\"user\"},"
                        + "{\"role\":\"assistant\",\"content\":\"a" + i + "\"},{\"role\":\"user\",\"content\":\"more " + i
                        + "\"}]}";
                assertThat(router.post("/v1/chat/completions", body).statusCode()).isEqualTo(200);
                used.add(servedBy());
            }
            assertThat(used).as("conversation %d", s).hasSize(1);
            homes.addAll(used);
        }
        assertThat(homes).hasSizeGreaterThan(1);
    }

    /** The one upstream that got a request since the last call; clears the records. */
    private String servedBy() {
        String who = null;
        for (TestUpstream u : List.of(a, b, c)) {
            if (u.completionCount() > 0) {
                assertThat(who).isNull();
                who = u.name();
            }
            u.clearRecorded();
        }
        assertThat(who).isNotNull();
        return who;
    }

    // ------------------------------------------------------------------ embeddings, rerank, health_check

    @Test
    void embeddingsAndRerankGoToABackendServingTheModel() {
        HttpResponse<String> e = router.post("/v1/embeddings", "{\"model\":\"small\",\"input\":\"hello\"}");
        HttpResponse<String> r = router.post("/v1/rerank",
                "{\"model\":\"big\",\"query\":\"q\",\"documents\":[\"x\",\"y\"]}");

        assertThat(e.statusCode()).isEqualTo(200);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(b.completionRequests()).singleElement().satisfies(q -> assertThat(q.path()).isEqualTo("/v1/embeddings"));
        assertThat(a.completionRequests()).singleElement().satisfies(q -> assertThat(q.path()).isEqualTo("/v1/rerank"));
        assertThat(router.post("/v1/embeddings", "{\"model\":\"nobody\",\"input\":\"x\"}").statusCode()).isEqualTo(404);
    }

    @Test
    void aBackendsOwnHealthCheckReplacesTheGlobalKeysItNames() {
        String yaml = """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: true, interval: 200ms, timeout: 150ms, endpoint: /v1/models}
                backends:
                  - {name: a, url: "%s", models: [m], health_check: {endpoint: /health}}
                  - {name: b, url: "%s", models: [m]}
                """.formatted(a.baseUrl(), b.baseUrl());
        router.server.apply(ConfigLoader.builder().build().loadString(yaml).orThrow());
        try {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(a.requests(q -> q.method().equals("GET") && q.path().equals("/health"))).isNotEmpty();
                assertThat(b.requests(q -> q.method().equals("GET") && q.path().equals("/v1/models"))).isNotEmpty();
            });
            assertThat(a.requests(q -> q.method().equals("GET") && q.path().equals("/v1/models"))).isEmpty();
        } finally {
            apply("");
        }
    }

    private double counter(String series) {
        for (String line : router.scrape().split("\n")) {
            if (line.startsWith(series)) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }
}
