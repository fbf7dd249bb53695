package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ConfigRendererTest {
    private static final TestDiscoverySection DISCOVERY = new TestDiscoverySection();
    private static final Map<String, String> SECRETS = Map.of(
            "BACKEND_KEY", "sk-backend-0001", "ADMIN_TOKEN", "adm-token-0002", "CLIENT_KEY", "client-key-0003",
            "BYPASS", "bypass-key-0004", "ETCD_PASSWORD", "etcd-pass-0005", "FILE_KEY", "file-key-0006");

    /** Every section away from its defaults, with a secret wherever one can be. */
    private static final String FULL = """
            server:
              bind_address: ["127.0.0.1:9000", "[::1]:9001", "unix:/run/cr/router.sock"]
              socket_mode: 0o640
              workers: 2
              connection_pool_size: 7
              max_request_body_size: 10MB
              max_header_size: 32KiB
              max_initial_line_length: 4KiB
              request_timeout: 1m30s
              connect_timeout: 500ms
              header_read_timeout: 3s
              idle_timeout: 2m
              shutdown_grace_period: 0s
            backends:
              - {name: p0, type: vllm, url: "http://10.1.0.5:8000/", models: [qwen], role: prefill, weight: 2,
                 api_key: "${BACKEND_KEY}", timeout: 45s}
              - {name: d0, type: llama.cpp, url: "https://d0.internal", role: decode, internal: true}
              - {name: u0, url: "http://u0:1", models: [a, b], enabled: false}
            selection_strategy: weighted_round_robin
            health_checks: {enabled: false, interval: 15s, timeout: 5s, unhealthy_threshold: 4, healthy_threshold: 1,
                            endpoint: /health, warmup_check_interval: 2s, max_warmup_duration: 10m}
            circuit_breaker: {enabled: false, failure_threshold: 9, failure_rate_threshold: 0.25, minimum_requests: 20,
                              window: 30s, timeout: 15s, half_open_max_requests: 5, half_open_success_threshold: 5}
            retry: {enabled: false, max_attempts: 5, budget_ratio: 0.1, budget_min_per_second: 1, backoff: 250ms}
            rate_limiting:
              enabled: true
              limits:
                per_client: {requests_per_second: 5, burst_capacity: 10}
                per_backend: {requests_per_second: 2.5}
                per_api_key: {requests_per_second: 1, burst_capacity: 3}
                global: {requests_per_second: 500, burst_capacity: 1000}
              whitelist: ["10.0.0.0/8", "::1"]
              bypass_keys: ["${BYPASS}"]
            api_keys:
              mode: blocking
              api_keys_file: keys.yaml
              api_keys:
                - {key: "${CLIENT_KEY}", id: team-a, name: Team A, user_id: u-1, organization_id: org-x,
                   scopes: [read, write], rate_limit: 100, expires_at: "2027-01-01T00:00:00Z",
                   allowed_backends: [p0], allowed_models: [qwen]}
                - {key: plain-but-secret-0007, enabled: false}
            admin: {auth: {method: bearer, token: "${ADMIN_TOKEN}"}}
            disaggregated_serving: {enabled: true, fallback_to_unified: false}
            logging: {level: warning, format: json}
            metrics: {enabled: false, endpoint: /prom}
            dynamo:
              enabled: true
              discovery: {endpoints: ["http://e:2379"], backoff: 1s, auth: {password: "${ETCD_PASSWORD}"}}
            """;

    @TempDir
    Path dir;

    private ConfigLoader loader() throws IOException {
        Files.writeString(dir.resolve("keys.yaml"), "- {key: \"${FILE_KEY}\", id: from-file}\n");
        return TestConfigs.loader(dir, SECRETS).dynamoSection(DISCOVERY).build();
    }

    private RouterConfig full() throws IOException {
        LoadResult r = loader().loadString(FULL);
        assertThat(r.errors()).isEmpty();
        return r.orThrow();
    }

    @Test
    void readbackLoadsBackToAnEqualConfigWhenSecretsAreSupplied() throws IOException {
        RouterConfig original = full();
        ConfigRenderer renderer = loader().renderer();

        String yaml = new Dump(DumpSettings.builder().build()).dumpToString(renderer.tree(original, true));
        RouterConfig reloaded = loader().loadString(yaml).orThrow();

        assertThat(reloaded).isEqualTo(original);
        assertThat(reloaded.apiKeys().keys()).extracting(ApiKeyConfig::id).containsExactly("team-a", "key-1", "from-file");
    }

    @Test
    void defaultsLoadBackToTheDefaults() throws IOException {
        RouterConfig defaults = RouterConfig.defaults();
        String yaml = ConfigRenderer.get().yaml(defaults);

        assertThat(TestConfigs.loader(dir, Map.of()).build().loadString(yaml).orThrow()).isEqualTo(defaults);
    }

    @Test
    void noSecretValueAppearsInTheYamlOrJsonReadback() throws IOException {
        RouterConfig config = full();
        ConfigRenderer renderer = loader().renderer();

        String yaml = renderer.yaml(config);
        String json = renderer.json(config);

        for (String secret : List.of("sk-backend-0001", "adm-token-0002", "client-key-0003", "bypass-key-0004",
                "etcd-pass-0005", "file-key-0006", "plain-but-secret-0007")) {
            assertThat(yaml).doesNotContain(secret);
            assertThat(json).doesNotContain(secret);
        }
        assertThat(yaml).contains(Secret.MASK);
    }

    @Test
    void rendersYamlKeyNamesAndMasksInJson() throws IOException {
        JsonNode json = new ObjectMapper().readTree(loader().renderer().json(full()));

        assertThat(json.path("server").path("bind_address").get(2).asText()).isEqualTo("unix:/run/cr/router.sock");
        assertThat(json.path("server").path("socket_mode").asText()).isEqualTo("0o640");
        assertThat(json.path("server").path("max_request_body_size").asText()).isEqualTo("10000000B");
        assertThat(json.path("server").path("request_timeout").asText()).isEqualTo("1m30s");
        assertThat(json.path("backends").get(0).path("url").asText()).isEqualTo("http://10.1.0.5:8000");
        assertThat(json.path("backends").get(0).path("api_key").asText()).isEqualTo(Secret.MASK);
        assertThat(json.path("backends").get(1).path("type").asText()).isEqualTo("llamacpp");
        assertThat(json.path("selection_strategy").asText()).isEqualTo("WeightedRoundRobin");
        assertThat(json.path("rate_limiting").path("limits").path("per_backend").path("burst_capacity").asInt())
                .isEqualTo(3);
        assertThat(json.path("api_keys").path("api_keys")).hasSize(2);
        assertThat(json.path("api_keys").path("api_keys").get(0).path("key").asText()).isEqualTo(Secret.MASK);
        assertThat(json.path("admin").path("auth").path("method").asText()).isEqualTo("bearer_token");
        assertThat(json.path("admin").path("auth").path("token").asText()).isEqualTo(Secret.MASK);
        assertThat(json.path("logging").path("level").asText()).isEqualTo("warn");
        assertThat(json.path("dynamo").path("discovery").path("auth").path("password").asText()).isEqualTo(Secret.MASK);
    }

    @Test
    void recordToStringNeverShowsASecret() throws IOException {
        String text = full().toString();

        for (String secret : SECRETS.values()) {
            assertThat(text).doesNotContain(secret);
        }
        assertThat(text).doesNotContain("plain-but-secret-0007");
    }
}
