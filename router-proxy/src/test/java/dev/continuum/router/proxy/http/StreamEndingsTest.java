package dev.continuum.router.proxy.http;

import static dev.continuum.router.proxy.http.HostileUpstream.chunk;
import static dev.continuum.router.proxy.http.HostileUpstream.drop;
import static dev.continuum.router.proxy.http.HostileUpstream.end;
import static dev.continuum.router.proxy.http.HostileUpstream.gate;
import static dev.continuum.router.proxy.http.HostileUpstream.head;
import static dev.continuum.router.proxy.http.HostileUpstream.stall;
import static dev.continuum.router.proxy.http.HostileUpstream.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.VirtualTimer;
import dev.continuum.router.testing.LogCapture;
import dev.continuum.router.testing.NpmFixtures;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way an upstream can fail a converted stream, written byte for byte by a raw socket upstream
 * ({@link HostileUpstream}), and the exact ending the client sees on the Anthropic Messages and Responses
 * ingresses (docs/ingresses.md, "Stream endings"): a fault in the read that carried the head is the router's 502
 * (or 504) in the wire's error shape; a fault after the head went out is the wire's error event and a terminated
 * chunked body; an upstream that ends without {@code [DONE]} (its last event unterminated or not) gets the closing
 * events. Then the official SDKs (node, test-fixtures/npm/sdk) read every case and must raise their API error, never
 * a parse error or a hang. The chunk-interval watchdog runs on a {@link VirtualTimer}, moved on when the upstream
 * stalls.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StreamEndingsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String C1 = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
            + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},"
            + "\"finish_reason\":null}]}";
    private static final String TAIL = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
            + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}],"
            + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}";
    private static final String TOOL_128 = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
            + "[{\"index\":128,\"id\":\"call_128\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}";
    private static final String BAD = "data: {not json at all\n\n";
    private static final String PREFIX = "The upstream backend's answer failed: ";
    private static final Duration CHUNK_INTERVAL = Duration.ofMillis(300);

    /** A fault in the read that carried the head: the router's status and the wire's error body. */
    private static final Map<String, String> BEFORE_HEAD = new LinkedHashMap<>();
    /** A fault after the head went out: the wire's error event, the body terminated. */
    private static final Map<String, String> AFTER_HEAD = new LinkedHashMap<>();
    /** Cases whose client opens the gate once it read the first text delta. */
    private static final List<String> GATED = new ArrayList<>();
    /** Upstreams that end cleanly without {@code [DONE]}: the closing events. */
    private static final List<String> CLEAN = List.of("no-done", "unterminated-tail");

    static {
        BEFORE_HEAD.put("invalid-json-first", "a chunk is not valid JSON");
        BEFORE_HEAD.put("too-many-tools-first", "more than 128 tool calls");
        BEFORE_HEAD.put("interleaved-first", "interleaved tool call fragments");
        BEFORE_HEAD.put("truncated-tail", "a chunk is not valid JSON");
        AFTER_HEAD.put("invalid-json-later", "a chunk is not valid JSON");
        AFTER_HEAD.put("oversized-later", "an event of the upstream's stream is too large");
        AFTER_HEAD.put("too-many-tools-later", "more than 128 tool calls");
        AFTER_HEAD.put("interleaved-later", "interleaved tool call fragments");
        AFTER_HEAD.put("stall", "no chunk within the streaming chunk interval");
        AFTER_HEAD.put("stall-before-events", "no chunk within the streaming chunk interval");
        AFTER_HEAD.put("drop", "the upstream closed the connection mid-answer");
        AFTER_HEAD.put("drop-later", "the upstream closed the connection mid-answer");
        GATED.addAll(List.of("invalid-json-later", "oversized-later", "too-many-tools-later", "interleaved-later",
                "drop-later"));
    }

    @TempDir
    Path dir;

    private final VirtualTimer timer = new VirtualTimer();
    private HostileUpstream upstream;
    private RouterHarness router;

    private static String sse(String data) {
        return "data: " + data + "\n\n";
    }

    private static String tool(int index, String id, String args) {
        String head = id == null ? "" : "\"id\":\"" + id + "\",\"type\":\"function\",";
        String name = id == null ? "" : "\"name\":\"f\",";
        return "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":" + index + ","
                + head + "\"function\":{" + name + "\"arguments\":" + JSON.valueToTree(args) + "}}]}}]}";
    }

    private static Map<String, List<HostileUpstream.Step>> scripts() {
        String start = head() + chunk(sse(C1));
        String interleaved = chunk(sse(tool(0, "call_0", "{"))) + chunk(sse(tool(1, "call_1", "{")))
                + chunk(sse(tool(0, null, "}")));
        String done = chunk(sse("[DONE]")) + end();
        Map<String, List<HostileUpstream.Step>> s = new LinkedHashMap<>();
        s.put("invalid-json-first", List.of(write(start + chunk(BAD) + done)));
        s.put("invalid-json-later", List.of(write(start), gate(), write(chunk(BAD) + done)));
        s.put("oversized-later", List.of(write(start), gate(),
                write(chunk("data: {\"x\":\"" + "x".repeat(1024 * 1024 + 16) + "\"}\n\n") + done)));
        s.put("too-many-tools-first", List.of(write(start + chunk(sse(TOOL_128)) + done)));
        s.put("too-many-tools-later", List.of(write(start), gate(), write(chunk(sse(TOOL_128)) + done)));
        s.put("interleaved-first", List.of(write(start + interleaved + done)));
        s.put("interleaved-later", List.of(write(start), gate(), write(interleaved + done)));
        s.put("stall", List.of(write(start), stall()));
        s.put("stall-before-events", List.of(write(head()), stall()));
        s.put("drop", List.of(write(start), drop()));
        s.put("drop-later", List.of(write(start), gate(), write("40\r\ndata: {\"id\""), drop()));
        s.put("truncated-tail", List.of(write(start + chunk("data: {\"choices\":[{\"delta\":{\"content\":\"x\"") + end())));
        s.put("no-done", List.of(write(start + chunk(sse(TAIL)) + end())));
        s.put("unterminated-tail", List.of(write(start + chunk("data: " + TAIL) + end())));
        s.put("event-stream-to-buffered", List.of(write(start + chunk(sse(TAIL)) + done)));
        s.put("buffered-drop", List.of(write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + "content-length: 500\r\n\r\n{\"id\":\"chatcmpl-1\",\"choices\":["), drop()));
        return s;
    }

    @BeforeAll
    void start() {
        upstream = HostileUpstream.start(scripts(), this::passTheChunkInterval);
        String yaml = """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: false}
                circuit_breaker: {enabled: false}
                retry: {enabled: false}
                timeouts: {request: {streaming: {chunk_interval: 300ms}}}
                backends:
                  - {name: hostile, url: "%s", models: [m]}
                """.formatted(upstream.url());
        router = RouterHarness.start(ConfigLoader.builder().build().loadString(yaml).orThrow(),
                b -> b.proxyOptions(Ingresses.standard(ProxyOptions.defaults().withTimer(timer),
                        new EstimatedTokens())));
    }

    @AfterAll
    void stop() {
        if (router != null) {
            router.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    /** The upstream went silent after the head: once the watchdog is armed for it, its interval passes. */
    private void passTheChunkInterval() {
        await().atMost(Duration.ofSeconds(20)).until(() -> timer.nextDue().equals(Optional.of(CHUNK_INTERVAL)));
        timer.advance(CHUNK_INTERVAL);
    }

    // ---------------------------------------------------------------- the client's view, in Java

    private enum Wire {
        MESSAGES("/v1/messages", "{\"model\":\"m\",\"max_tokens\":16,\"stream\":%s,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "text_delta"),
        RESPONSES("/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"stream\":%s}", "response.output_text.delta");

        final String path;
        final String body;
        final String firstDelta;

        Wire(String path, String body, String firstDelta) {
            this.path = path;
            this.body = body;
            this.firstDelta = firstDelta;
        }
    }

    /** What the client got: the status, the body as text, and whether the body ended without its terminator. */
    private record Ending(int status, String contentType, String body, boolean cut) {
        /** The body's SSE events in order: (event name, data). */
        List<Map.Entry<String, JsonNode>> events() throws IOException {
            List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
            for (String block : body.split("\n\n")) {
                String name = null;
                String data = null;
                for (String line : block.split("\n")) {
                    if (line.startsWith("event: ")) {
                        name = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                        data = line.substring(6);
                    }
                }
                if (data != null) {
                    out.add(Map.entry(Objects.requireNonNull(name, block), JSON.readTree(data)));
                }
            }
            return out;
        }
    }

    private Ending call(Wire wire, String name, boolean stream) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(router.uri(wire.path)).timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json").header("x-case", name)
                .POST(HttpRequest.BodyPublishers.ofString(wire.body.formatted(stream))).build();
        HttpResponse<InputStream> res = router.http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        StringBuilder body = new StringBuilder();
        boolean cut = false;
        boolean released = !GATED.contains(name);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                body.append(line).append('\n');
                if (!released && line.contains(wire.firstDelta)) {
                    released = true;
                    upstream.release(name); // the client saw the first text: now the upstream goes on
                }
            }
        } catch (IOException e) {
            cut = true; // the chunked body ended without its terminator
        }
        return new Ending(res.statusCode(), res.headers().firstValue("content-type").orElse(""), body.toString(), cut);
    }

    @Test
    void aFaultInTheReadThatCarriedTheHeadIsAStatusWithTheWiresErrorBody() throws Exception {
        for (Map.Entry<String, String> c : BEFORE_HEAD.entrySet()) {
            String message = PREFIX + c.getValue() + ".";
            Ending m = call(Wire.MESSAGES, c.getKey(), true);
            assertThat(m.status()).as(c.getKey()).isEqualTo(502);
            assertThat(m.cut()).isFalse();
            assertThat(m.contentType()).isEqualTo("application/json");
            assertThat(JSON.readTree(m.body())).as(c.getKey()).isEqualTo(JSON.readTree(
                    "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":"
                            + JSON.valueToTree(message + " Error code: bad_gateway") + "}}"));
            Ending r = call(Wire.RESPONSES, c.getKey(), true);
            assertThat(r.status()).as(c.getKey()).isEqualTo(502);
            assertThat(r.cut()).isFalse();
            assertThat(JSON.readTree(r.body())).as(c.getKey()).isEqualTo(JSON.readTree(
                    "{\"error\":{\"message\":" + JSON.valueToTree(message) + ",\"type\":\"server_error\","
                            + "\"code\":\"bad_gateway\",\"param\":null}}"));
        }
    }

    @Test
    void aFaultAfterTheHeadEndsTheStreamWithTheWiresErrorEventAndATerminatedBody() throws Exception {
        for (Map.Entry<String, String> c : AFTER_HEAD.entrySet()) {
            String name = c.getKey();
            String message = PREFIX + c.getValue() + ".";
            boolean timeout = name.startsWith("stall");
            Ending m = call(Wire.MESSAGES, name, true);
            assertThat(m.status()).as(name).isEqualTo(200);
            assertThat(m.cut()).as(name + ": the chunked body is terminated").isFalse();
            List<Map.Entry<String, JsonNode>> ev = m.events();
            assertThat(ev.get(ev.size() - 1).getKey()).as(name).isEqualTo("error");
            assertThat(ev.get(ev.size() - 1).getValue()).as(name).isEqualTo(JSON.readTree(
                    "{\"type\":\"error\",\"error\":{\"type\":\"" + (timeout ? "timeout_error" : "api_error")
                            + "\",\"message\":" + JSON.valueToTree(message) + "}}"));
            assertThat(ev).as(name).noneMatch(e -> e.getKey().equals("message_stop"));
            if (GATED.contains(name)) {
                // The client read the text before the fault (the gate opened on it).
                assertThat(m.body()).as(name).contains("\"text\":\"Hi\"");
            }

            Ending r = call(Wire.RESPONSES, name, true);
            assertThat(r.status()).as(name).isEqualTo(200);
            assertThat(r.cut()).as(name + ": the chunked body is terminated").isFalse();
            List<Map.Entry<String, JsonNode>> rev = r.events();
            Map.Entry<String, JsonNode> failed = rev.get(rev.size() - 2);
            Map.Entry<String, JsonNode> error = rev.get(rev.size() - 1);
            assertThat(failed.getKey()).as(name).isEqualTo("response.failed");
            assertThat(failed.getValue().path("response").path("status").asText()).isEqualTo("failed");
            assertThat(failed.getValue().path("response").path("error")).isEqualTo(JSON.readTree(
                    "{\"code\":\"server_error\",\"message\":" + JSON.valueToTree(message) + "}"));
            assertThat(error.getKey()).as(name).isEqualTo("error");
            long sequence = failed.getValue().path("sequence_number").asLong() + 1;
            assertThat(error.getValue()).as(name).isEqualTo(JSON.readTree("{\"type\":\"error\",\"code\":\"server_error\","
                    + "\"message\":" + JSON.valueToTree(message) + ",\"param\":null,\"sequence_number\":" + sequence + "}"));
        }
        String metrics = router.scrape();
        for (String reason : List.of("invalid_event", "oversized_event", "too_many_tool_calls", "interleaved_tool_calls",
                "chunk_interval", "upstream_closed")) {
            assertThat(metrics).contains("continuum_stream_aborts_total{reason=\"" + reason + "\",side=\"upstream\"}");
            assertThat(metrics).doesNotContain("continuum_stream_aborts_total{reason=\"" + reason
                    + "\",side=\"upstream\"} 0.0");
        }
    }

    @Test
    void anUpstreamThatEndsWithoutDoneGetsTheClosingEvents() throws Exception {
        for (String name : CLEAN) {
            Ending m = call(Wire.MESSAGES, name, true);
            assertThat(m.status()).isEqualTo(200);
            assertThat(m.cut()).isFalse();
            List<Map.Entry<String, JsonNode>> ev = m.events();
            assertThat(ev.stream().map(Map.Entry::getKey).toList()).as(name).containsExactly("message_start", "ping",
                    "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                    "message_delta", "message_stop");
            assertThat(m.body()).contains("\"text\":\" there\"");
            assertThat(ev.get(6).getValue().path("delta").path("stop_reason").asText()).isEqualTo("end_turn");
            assertThat(ev.get(6).getValue().path("usage").path("output_tokens").asInt()).isEqualTo(2);

            Ending r = call(Wire.RESPONSES, name, true);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.cut()).isFalse();
            List<Map.Entry<String, JsonNode>> rev = r.events();
            Map.Entry<String, JsonNode> last = rev.get(rev.size() - 1);
            assertThat(last.getKey()).as(name).isEqualTo("response.completed");
            assertThat(last.getValue().path("response").path("output").path(0).path("content").path(0).path("text")
                    .asText()).isEqualTo("Hi there");
        }
    }

    @Test
    void aBufferedRequestAnsweredWithAnEventStreamIsA502NeverAStream() throws Exception {
        String message = "The upstream backend answered a request for one answer with an event stream.";
        Ending m = call(Wire.MESSAGES, "event-stream-to-buffered", false);
        assertThat(m.status()).isEqualTo(502);
        assertThat(m.contentType()).isEqualTo("application/json");
        assertThat(JSON.readTree(m.body()).path("error").path("message").asText()).startsWith(message);
        Ending r = call(Wire.RESPONSES, "event-stream-to-buffered", false);
        assertThat(r.status()).isEqualTo(502);
        assertThat(JSON.readTree(r.body()).path("error").path("message").asText()).isEqualTo(message);
    }

    @Test
    void eachFaultIsLoggedOnceAtWarnWithTheClientsRequestIdEscaped() throws Exception {
        String body = Wire.MESSAGES.body.formatted(true);
        try (LogCapture logs = LogCapture.of("dev.continuum.router.proxy.ProxyExchange");
             Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            OutputStream out = s.getOutputStream();
            // 0x9B is a C1 control (CSI) a terminal would act on; HTTP lets it through as obs-text.
            out.write(("POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-case: drop\r\n"
                    + "x-request-id: req-\u009b31m-7\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder got = new StringBuilder();
            byte[] buf = new byte[4096];
            while (!got.toString().endsWith("\r\n0\r\n\r\n")) { // the chunked body's terminator
                int n = in.read(buf);
                assertThat(n).as("the connection stays open until the body is terminated: " + got).isPositive();
                got.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            }
            assertThat(got.toString()).contains("event: error");
            await().atMost(Duration.ofSeconds(10)).until(() -> !logs.warnings().isEmpty());
            assertThat(logs.warnings()).singleElement().satisfies(line -> assertThat(line)
                    .contains("stream fault upstream_closed on /v1/messages").contains("req-")
                    .doesNotContain("\u009b"));
        }
    }

    @Test
    void aBufferedAnswerCutBeforeItsEndIsA502InTheWiresShapeNeverAnEmptyReply() throws Exception {
        String message = PREFIX + "the upstream closed the connection mid-answer.";
        Ending m = call(Wire.MESSAGES, "buffered-drop", false);
        assertThat(m.status()).isEqualTo(502);
        assertThat(JSON.readTree(m.body())).isEqualTo(JSON.readTree("{\"type\":\"error\",\"error\":{\"type\":"
                + "\"api_error\",\"message\":" + JSON.valueToTree(message + " Error code: bad_gateway") + "}}"));
        Ending r = call(Wire.RESPONSES, "buffered-drop", false);
        assertThat(r.status()).isEqualTo(502);
        assertThat(JSON.readTree(r.body()).path("error").path("message").asText()).isEqualTo(message);
    }

    // ---------------------------------------------------------------- the official SDKs

    @Test
    void theOfficialSdksRaiseTheirApiErrorOnEveryFaultAndFinishTheCleanEndings() throws Exception {
        List<String> cases = new ArrayList<>(BEFORE_HEAD.keySet());
        cases.addAll(AFTER_HEAD.keySet());
        cases.addAll(CLEAN);
        Path script = dir.resolve("stream-faults.cjs");
        try (InputStream in = getClass().getResourceAsStream("/sdk/stream-faults.cjs")) {
            Files.copy(Objects.requireNonNull(in, "stream-faults.cjs"), script);
        }
        ProcessBuilder pb = new ProcessBuilder("node", script.toString(), router.uri("").toString(),
                upstream.url().toString(), String.join(",", cases), String.join(",", GATED))
                .redirectError(dir.resolve("node.err").toFile());
        pb.environment().put("NODE_PATH", NpmFixtures.nodeModules("sdk").toString());
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("node.err"))).isZero();
        JsonNode results = JSON.readTree(new String(out, StandardCharsets.UTF_8));

        StringBuilder table = new StringBuilder("| case | client | raised | status | type | message |\n");
        List<String> wrong = new ArrayList<>();
        for (String name : cases) {
            results.path(name).fields().forEachRemaining(e -> {
                JsonNode r = e.getValue();
                table.append("| ").append(name).append(" | ").append(e.getKey()).append(" | ")
                        .append(r.path("thrown").asBoolean() ? r.path("class").asText() : "nothing (completed)")
                        .append(" | ").append(r.path("status").asText("")).append(" | ")
                        .append(r.path("type").asText("")).append(" | ").append(r.path("message").asText(""))
                        .append(" |\n");
                boolean clean = CLEAN.contains(name);
                if (clean ? r.path("thrown").asBoolean() || !r.path("completed").asBoolean()
                        : !r.path("thrown").asBoolean() || !r.path("apiError").asBoolean()) {
                    wrong.add(name + " / " + e.getKey() + ": " + r);
                }
            });
            assertThat(results.path(name).size()).as(name).isEqualTo(4);
        }
        System.out.println("SDK stream endings:\n" + table);
        assertThat(wrong).isEmpty();
    }
}
