package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.sim.DirectFrontend;
import dev.continuum.router.sim.SimFleet;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.NpmFixtures;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Anthropic Messages and Responses ingresses end to end with the official SDKs as clients: node runs
 * {@code @anthropic-ai/sdk} and {@code openai} (test-fixtures/npm/sdk, exact versions) against the router in front
 * of the simulated Dynamo fleet, whose direct-mode frontend emulator refuses any request without a valid pin of
 * its own fleet. So every SDK call that succeeds went through a pin, and every stream the SDKs' own parsers
 * accepted was an event sequence they understand. What the emulator received is checked field by field against
 * the conversion (docs/ingresses.md), and a second shim replica that is down shows that a converted request is
 * pinned afresh on its retry while a chat completion keeps its one pin.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SdkIngressEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final String PIN = "x-dynamo-worker-instance-id";
    private static final String PREFILL_PIN = "x-dynamo-prefill-instance-id";

    @TempDir
    static Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private SimFleet fleet;
    private RouterProcess router;
    /** What node printed: one entry per SDK call. */
    private JsonNode sdk;

    @BeforeAll
    void start() throws Exception {
        // Short answers: 4 tokens, 5 ms apart (the tool call takes 3 of them).
        fleet = SimFleet.start(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(1, 1)
                .withFrontend("127.0.0.1", 0, 4, 5));
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                backends:
                  - {name: frontend, url: "%s", models: ["%s"]}
                disaggregated_serving: {enabled: true, fallback_to_unified: false}
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                dynamo:
                  enabled: true
                  discovery:
                    source: file
                    file:
                      root: "%s"
                      namespaces: [dynamo]
                      rescan_interval: 100ms
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                """.formatted(fleet.frontendUrl(), MODEL, dir.resolve("store"));
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode view = JSON.readTree(get("/admin/dynamo/workers").body());
            assertThat(view.get("subscriptions")).as(view.toString()).hasSize(2)
                    .allSatisfy(s -> assertThat(s.get("state").asText()).isEqualTo("connected"));
        });
        sdk = runNode("ingress-clients.cjs", base());
    }

    @AfterAll
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    private JsonNode runNode(String name, String routerBase) throws Exception {
        Path script = dir.resolve(name);
        try (InputStream in = getClass().getResourceAsStream("/sdk/" + name)) {
            Files.copy(java.util.Objects.requireNonNull(in, name), script);
        }
        ProcessBuilder pb = new ProcessBuilder("node", script.toString(), routerBase, MODEL)
                .redirectError(dir.resolve("node.err").toFile());
        pb.environment().put("NODE_PATH", NpmFixtures.nodeModules("sdk").toString());
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("node.err"))).isZero();
        return JSON.readTree(new String(out, StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- the SDKs

    @Test
    void everySdkCallSucceedsThroughAPinAndTheSdksAcceptEveryStream() {
        List<String> failed = new ArrayList<>();
        sdk.fields().forEachRemaining(e -> {
            if (!e.getValue().path("ok").asBoolean()) {
                failed.add(e.getKey() + ": " + e.getValue().path("error").asText());
            }
        });
        assertThat(failed).isEmpty();
        // Every dispatched call reached the emulator pinned to a prefill/decode pair (it refuses anything else).
        for (String name : List.of("messages-create", "messages-prefixed", "messages-stream-text",
                "messages-stream-tool", "messages-tool-result", "responses-create", "responses-stream",
                "responses-tool", "responses-stream-tool", "responses-multi-turn", "chat-create", "chat-stream")) {
            DirectFrontend.Received r = received(name);
            assertThat(r.headers()).as(name).containsKeys(PIN, PREFILL_PIN);
        }
        // Answered by the router itself or refused before dispatch: never sent.
        assertThat(receivedAll("count-tokens")).isEmpty();
        assertThat(receivedAll("messages-unknown-model")).isEmpty();
    }

    @Test
    void anthropicMessagesAnswersAreWhatTheSdkExpects() {
        JsonNode create = sdk.path("messages-create");
        assertThat(create.path("type").asText()).isEqualTo("message");
        assertThat(create.path("text").asText()).isEqualTo("Hello from the simulated fleet.");
        assertThat(create.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(create.path("usage").path("output_tokens").asInt()).isEqualTo(4);
        assertThat(create.path("usage").path("input_tokens").asInt()).isPositive();
        assertThat(create.path("id").asText()).startsWith("msg_");
        assertThat(sdk.path("messages-prefixed").path("text").asText()).isEqualTo("Hello from the simulated fleet.");

        JsonNode text = sdk.path("messages-stream-text");
        assertThat(strings(text.path("events"))).containsExactly("message_start", "content_block_start",
                "content_block_delta:text_delta", "content_block_delta:text_delta", "content_block_delta:text_delta",
                "content_block_delta:text_delta", "content_block_stop", "message_delta", "message_stop");
        assertThat(text.path("text").asText()).isEqualTo("tok0 tok1 tok2 tok3 ");
        assertThat(text.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(text.path("usage").path("output_tokens").asInt()).isEqualTo(4);

        JsonNode tool = sdk.path("messages-stream-tool");
        assertThat(strings(tool.path("events"))).containsExactly("message_start", "content_block_start",
                "content_block_delta:input_json_delta", "content_block_delta:input_json_delta", "content_block_stop",
                "message_delta", "message_stop");
        assertThat(tool.path("stop_reason").asText()).isEqualTo("tool_use");
        assertThat(tool.path("tool").path("name").asText()).isEqualTo("get_weather");
        assertThat(tool.path("tool").path("input").path("city").asText()).isEqualTo("Paris");

        assertThat(sdk.path("messages-tool-result").path("text").asText()).isEqualTo("Hello from the simulated fleet.");
        assertThat(sdk.path("count-tokens").path("input_tokens").asLong()).isPositive();
        JsonNode unknown = sdk.path("messages-unknown-model");
        assertThat(unknown.path("thrown").asBoolean()).isTrue();
        assertThat(unknown.path("status").asInt()).isEqualTo(404);
        assertThat(unknown.path("class").asText()).isEqualTo("NotFoundError");
        assertThat(unknown.path("type").asText()).isEqualTo("not_found_error");
    }

    @Test
    void responsesAnswersAreWhatTheSdkExpects() {
        JsonNode create = sdk.path("responses-create");
        assertThat(create.path("object").asText()).isEqualTo("response");
        assertThat(create.path("status").asText()).isEqualTo("completed");
        assertThat(create.path("output_text").asText()).isEqualTo("Hello from the simulated fleet.");
        assertThat(create.path("usage").path("output_tokens").asInt()).isEqualTo(4);
        assertThat(create.path("id").asText()).startsWith("resp_");

        JsonNode stream = sdk.path("responses-stream");
        assertThat(strings(stream.path("events"))).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added", "response.output_text.delta",
                "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
                "response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.completed");
        assertThat(stream.path("output_text").asText()).isEqualTo("tok0 tok1 tok2 tok3 ");

        assertThat(sdk.path("responses-tool").path("call").path("name").asText()).isEqualTo("get_weather");
        assertThat(sdk.path("responses-tool").path("call").path("arguments").asText()).isEqualTo("{\"city\":\"Paris\"}");
        JsonNode streamTool = sdk.path("responses-stream-tool");
        assertThat(strings(streamTool.path("events"))).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.delta", "response.function_call_arguments.done",
                "response.output_item.done", "response.completed");
        assertThat(streamTool.path("call").path("arguments").asText()).isEqualTo("{\"city\":\"Paris\"}");
        assertThat(sdk.path("responses-multi-turn").path("output_text").asText())
                .isEqualTo("Hello from the simulated fleet.");
        assertThat(sdk.path("chat-create").path("text").asText()).isEqualTo("Hello from the simulated fleet.");
        assertThat(sdk.path("chat-stream").path("text").asText()).isEqualTo("tok0 tok1 tok2 tok3 ");
    }

    // ---------------------------------------------------------------- what the shim received

    @Test
    void theShimReceivedEachConversionFieldByField() throws Exception {
        assertConverted("messages-create", """
                {"model":"%s","messages":[
                  {"role":"system","content":"You are terse.\\nAnswer in English."},
                  {"role":"user","content":[{"type":"text","text":"[case:messages-create] Hello"},
                                            {"type":"text","text":"and goodbye"}]}],
                 "max_tokens":32,"temperature":0.2,"top_p":0.9,"top_k":5,"stop":["\\n\\nHuman:"],"user":"user-7",
                 "stream":false}""");
        assertConverted("messages-stream-tool", """
                {"model":"%s","messages":[{"role":"user","content":"[case:messages-stream-tool] Weather in Paris?"}],
                 "max_tokens":64,
                 "tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",
                   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
                 "tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}""");
        assertConverted("messages-tool-result", """
                {"model":"%s","messages":[
                  {"role":"user","content":"[case:messages-tool-result] Weather in Paris?"},
                  {"role":"assistant","content":"Let me check.","tool_calls":[{"id":"toolu_1","type":"function",
                    "function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},
                  {"role":"tool","tool_call_id":"toolu_1","content":"Sunny, 21 C"}],
                 "max_tokens":32,
                 "tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",
                   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
                 "stream":false}""");
        assertConverted("responses-create", """
                {"model":"%s","messages":[{"role":"system","content":"You are terse."},
                  {"role":"user","content":"[case:responses-create] Hello"}],"max_tokens":32,"stream":false}""");
        assertConverted("responses-multi-turn", """
                {"model":"%s","messages":[
                  {"role":"user","content":"[case:responses-multi-turn] Weather in Paris?"},
                  {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
                    "function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},
                  {"role":"tool","tool_call_id":"call_1","content":"Sunny, 21 C"}],
                 "tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",
                   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
                   "strict":false}}],
                 "stream":false}""");
        assertConverted("responses-stream", """
                {"model":"%s","messages":[{"role":"user","content":[
                  {"type":"text","text":"[case:responses-stream] Tell me a story"}]}],
                 "stream":true,"stream_options":{"include_usage":true}}""");
    }

    private void assertConverted(String name, String expected) throws Exception {
        assertThat(JSON.readTree(received(name).body())).as(name)
                .isEqualTo(JSON.readTree(expected.formatted(MODEL)));
    }

    // ---------------------------------------------------------------- a fresh pin per send

    @Test
    void aConvertedRequestIsPinnedAfreshOnItsRetryAndAChatCompletionKeepsItsPin() throws Exception {
        // A second router whose shim pool has a replica that is down: round robin sends first attempts there,
        // and each is retried on the live replica (no breaker, so the dead replica keeps its turn).
        int closed = FreePorts.next();
        Path file = dir.resolve("retry.yaml");
        Files.writeString(file, Files.readString(dir.resolve("config.yaml"))
                .replace("backends:\n  - {name: frontend", "backends:\n  - {name: down, url: \"http://127.0.0.1:"
                        + closed + "\", models: [\"" + MODEL + "\"]}\n  - {name: frontend")
                .replace("backends: [frontend]", "backends: [down, frontend]")
                .replace("health_checks: {enabled: false}", "health_checks: {enabled: false}\ncircuit_breaker: {enabled: false}"));
        try (RouterProcess second = startConnected(file)) {
            String base = base(second);
            for (String[] route : List.of(
                    new String[] {"/v1/messages", "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,\"messages\":"
                            + "[{\"role\":\"user\",\"content\":\"hi\"}]}"},
                    new String[] {"/v1/responses", "{\"model\":\"" + MODEL + "\",\"input\":\"hi\"}"},
                    new String[] {"/v1/chat/completions", "{\"model\":\"" + MODEL + "\",\"messages\":"
                            + "[{\"role\":\"user\",\"content\":\"hi\"}]}"})) {
                double selections = metric(base, "continuum_dynamo_selection_total", "role=\"decode\"");
                double retries = metric(base, "continuum_retries_total", "");
                double requests = metric(base, "disaggregated_requests_total", "");
                for (int i = 0; i < 4; i++) {
                    HttpResponse<String> r = send(base, "POST", route[0], route[1]);
                    assertThat(r.statusCode()).as(route[0] + ": " + r.body()).isEqualTo(200);
                }
                double retried = metric(base, "continuum_retries_total", "") - retries;
                double selected = metric(base, "continuum_dynamo_selection_total", "role=\"decode\"") - selections;
                assertThat(retried).as(route[0]).isPositive();
                // One selection per send behind a converting ingress; one per request on the chat route.
                assertThat(selected).as(route[0]).isEqualTo(route[0].equals("/v1/chat/completions") ? 4 : 4 + retried);
                // Counted once per request however many plans its sends took.
                assertThat(metric(base, "disaggregated_requests_total", "") - requests).as(route[0]).isEqualTo(4);
            }
        }
    }

    // ---------------------------------------------------------------- native Responses passthrough

    @Test
    void aNativeResponsesBackendGetsTheClientsBodyPinnedByModelAlone() throws Exception {
        // A second router whose frontend is configured to serve the Responses API itself.
        Path file = dir.resolve("native.yaml");
        Files.writeString(file, Files.readString(dir.resolve("config.yaml")).replace("models: [\"" + MODEL + "\"]}",
                "models: [\"" + MODEL + "\"], responses_api: native}"));
        try (RouterProcess second = startConnected(file)) {
            String base = base(second);
            JsonNode out = runNode("native-responses.cjs", base);
            String text = "Hello from the simulated fleet.";
            assertThat(out.path("native-create").path("ok").asBoolean()).as(out.toString()).isTrue();
            assertThat(out.path("native-create").path("output_text").asText()).isEqualTo(text);
            assertThat(out.path("native-create").path("id").asText()).isEqualTo("resp_sim"); // the backend's own
            assertThat(out.path("native-stream").path("ok").asBoolean()).as(out.toString()).isTrue();
            assertThat(out.path("native-stream").path("output_text").asText()).isEqualTo(text);
            assertThat(strings(out.path("native-stream").path("events"))).startsWith("response.created")
                    .contains("response.output_text.delta").endsWith("response.completed");

            // The frontend (which refuses anything without a valid pair of its fleet) got the client's Responses
            // body, not a chat completion, pinned by the router alone and without nvext.token_data.
            DirectFrontend.Received create = received("native-create");
            JsonNode body = JSON.readTree(create.body());
            assertThat(body.path("previous_response_id").asText()).isEqualTo("resp_earlier");
            assertThat(body.has("messages")).isFalse();
            assertThat(create.headers()).containsKeys(PIN, PREFILL_PIN);

            HttpRequest raw = HttpRequest.newBuilder(URI.create(base + "/v1/responses"))
                    .header("content-type", "application/json").header(PIN, "1").header("x-dynamo-dp-rank", "0")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"input\":"
                            + "\"[case:native-raw] hi\",\"nvext\":{\"token_data\":[1,2,3],\"backend_instance_id\":1}}"))
                    .build();
            HttpResponse<String> r = client.send(raw, HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode answer = JSON.readTree(r.body());
            assertThat(answer.path("id").asText()).isEqualTo("resp_sim");
            assertThat(answer.path("output").path(0).path("content").path(0).path("text").asText()).isEqualTo(text);
            DirectFrontend.Received got = received("native-raw");
            JsonNode sent = JSON.readTree(got.body());
            assertThat(sent.path("input").asText()).isEqualTo("[case:native-raw] hi");
            assertThat(sent.path("nvext").has("token_data")).isFalse();
            assertThat(sent.path("nvext").has("backend_instance_id")).isFalse();
            assertThat(got.headers().get(PIN)).isNotEqualTo("1");
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Another router on {@code file}, once its load subscriptions are connected. */
    private RouterProcess startConnected(Path file) throws Exception {
        DynamoSections sections = DynamoSections.create(Map.of());
        RouterProcess second = RouterProcess.start(ConfigLoader.builder().environment(Map.of())
                .overrides(ConfigOverrides.none().withConfigFile(file)).dynamoSections(sections.all()).build(),
                sections);
        String base = base(second);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> send(base, "GET", "/admin/dynamo/workers", null)
                    .body().contains("\"connected\""));
        } catch (RuntimeException | Error e) {
            second.close();
            throw e;
        }
        return second;
    }

    private static String base(RouterProcess process) {
        return "http://127.0.0.1:" + ((InetSocketAddress) process.boundAddresses().get(0)).getPort();
    }

    private DirectFrontend.Received received(String name) {
        List<DirectFrontend.Received> all = receivedAll(name);
        assertThat(all).as("requests the shim received for " + name).hasSize(1);
        return all.get(0);
    }

    private List<DirectFrontend.Received> receivedAll(String name) {
        return fleet.frontend().received().stream().filter(r -> r.body().contains("[case:" + name + "]")).toList();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (Iterator<JsonNode> it = array.elements(); it.hasNext(); ) {
            out.add(it.next().asText());
        }
        return out;
    }

    private String base() {
        return base(router);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send(base(), "GET", path, null);
    }

    private HttpResponse<String> send(String base, String method, String path, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).header("content-type",
                "application/json");
        b = body == null ? b.GET() : b.method(method, HttpRequest.BodyPublishers.ofString(body));
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private double metric(String base, String name, String label) throws Exception {
        double sum = 0;
        for (String line : send(base, "GET", "/metrics", null).body().split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && Stream.of(label).allMatch(line::contains)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
