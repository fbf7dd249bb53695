package dev.continuum.router.core.config;

import static dev.continuum.router.core.config.TestConfigs.ONE_BACKEND;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.Problem.Severity;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every validation rule: a YAML snippet and the exact problem line it must produce. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ValidationRulesTest {
    private static final String E = "ERROR";
    private static final String W = "WARNING";

    static Stream<Arguments> rules() {
        return Stream.of(
                // server
                rule("server: {bind_address: nohost}", E,
                        "server.bind_address: \"nohost\" (expected: host:port, [ipv6]:port or unix:/absolute/path)"),
                rule("server: {bind_address: \"127.0.0.1:70000\"}", E,
                        "server.bind_address: \"127.0.0.1:70000\" (expected: a port in 0..65535)"),
                rule("server: {bind_address: \"::1:8080\"}", E,
                        "server.bind_address: \"::1:8080\" (expected: host:port, [ipv6]:port or unix:/absolute/path)"),
                rule("server: {bind_address: \"[::1:8080\"}", E,
                        "server.bind_address: \"[::1:8080\" (expected: host:port, [ipv6]:port or unix:/absolute/path)"),
                rule("server: {bind_address: [\"unix:relative.sock\"]}", E,
                        "server.bind_address[0]: \"unix:relative.sock\" (expected: unix: followed by an absolute socket path)"),
                rule("server: {bind_address: [\"127.0.0.1:8080\", \"127.0.0.1:8080\"]}", E,
                        "server.bind_address[1]: \"127.0.0.1:8080\" (expected: each address once; same as server.bind_address[0])"),
                rule("server: {bind_address: []}", E, "server.bind_address: [] (expected: at least one address)"),
                rule("server: {bind_address: {host: x}}", E,
                        "server.bind_address: a map (expected: a string or a list of strings)"),
                rule("server: {bind_address: \"unix:/run/r.sock\", socket_mode: 0o999}", E,
                        "server.socket_mode: \"0o999\" (expected: permission bits such as 0o660, 0660 or 432 (at most 0o777))"),
                rule("server: {socket_mode: 0o660}", W,
                        "server.socket_mode: applies only to unix: entries of server.bind_address; ignored"),
                rule("server: {workers: -1}", E, "server.workers: -1 (expected: >= 0)"),
                rule("server: {connection_pool_size: 0}", E, "server.connection_pool_size: 0 (expected: > 0)"),
                rule("server: {max_request_body_size: 0}", E, "server.max_request_body_size: 0 (expected: a size > 0)"),
                rule("server: {max_header_size: 10XB}", E,
                        "server.max_header_size: \"10XB\" (expected: a size such as 1048576, 512KiB, 10MiB, 1GiB, 10MB)"),
                rule("server: {request_timeout: 0s}", E, "server.request_timeout: \"0s\" (expected: a duration > 0)"),
                rule("server: {idle_timeout: soon}", E,
                        "server.idle_timeout: \"soon\" (expected: a duration such as 500ms, 30s, 5m, 1h, 1m30s)"),
                rule("server: {body_read_timeout: 0s}", E, "server.body_read_timeout: \"0s\" (expected: a duration > 0)"),
                rule("server: {max_connections: 0}", E, "server.max_connections: 0 (expected: > 0)"),
                rule("server: {max_request_body_size: 10MiB, max_buffered_request_size: 1MiB}", E,
                        "server.max_buffered_request_size: \"1MiB\" (expected: at least server.max_request_body_size (10MiB))"),
                rule("server: {shutdown_grace_period: 10s, shutdown_quiet_period: 20s}", E,
                        "server.shutdown_quiet_period: \"20s\" (expected: at most server.shutdown_grace_period (10s):"
                                + " the quiet period is part of it)"),
                rule("server: [a]", E, "server: a list (expected: a map)"),
                // backends
                rule("backends: {a: 1}", E, "backends: a map (expected: a list of backends)"),
                rule("backends: [x]", E, "backends[0]: \"x\" (expected: a map with name, type and url)"),
                rule("backends: [{url: \"http://h:1\"}]", E,
                        "backends[0].name: missing (expected: a name matching [A-Za-z0-9._-]{1,64})"),
                rule("backends: [{name: \"a b\", url: \"http://h:1\"}]", E,
                        "backends[0].name: \"a b\" (expected: a name matching [A-Za-z0-9._-]{1,64})"),
                rule("backends: [{name: a, url: \"http://h:1\"}, {name: a, url: \"http://h:2\"}]", E,
                        "backends[1].name: \"a\" (expected: a unique name; also used by backends[0])"),
                rule("backends: [{name: a, type: foo, url: \"http://h:1\"}]", E,
                        "backends[0].type: \"foo\" (expected: one of openai, ollama, vllm, localai, lmstudio, llamacpp, mlxcel, continuum)"),
                rule("backends: [{name: a, type: anthropic, url: \"http://h:1\"}]", E,
                        "backends[0].type: \"anthropic\" (expected: an OpenAI-wire backend type; anthropic/gemini translation is not in this build)"),
                rule("backends: [{name: a, type: gemini, url: \"http://h:1\"}]", E,
                        "backends[0].type: \"gemini\" (expected: an OpenAI-wire backend type; anthropic/gemini translation is not in this build)"),
                rule("backends: [{name: a}]", E,
                        "backends[0].url: missing (expected: an absolute http or https URL with a host)"),
                rule("backends: [{name: a, url: \"ftp://h\"}]", E,
                        "backends[0].url: \"ftp://h\" (expected: an absolute http or https URL with a host)"),
                rule("backends: [{name: a, url: /v1}]", E,
                        "backends[0].url: \"/v1\" (expected: an absolute http or https URL with a host)"),
                rule("backends: [{name: a, url: \"http://h:1/x?y=1\"}]", E,
                        "backends[0].url: \"http://h:1/x?y=1\" (expected: no query string)"),
                rule("backends: [{name: a, url: \"http://h:1/#f\"}]", E,
                        "backends[0].url: \"http://h:1/#f\" (expected: no fragment)"),
                rule("backends: [{name: a, url: \"http://u:pw@h:1\"}]", E,
                        "backends[0].url: \"http://****@h:1\" (expected: no credentials in the URL; use api_key)"),
                rule("backends: [{name: a, url: \"http://h:1\", models: m}]", E,
                        "backends[0].models: \"m\" (expected: a list)"),
                rule("backends: [{name: a, url: \"http://h:1\", models: [\"\"]}]", E,
                        "backends[0].models[0]: \"\" (expected: a non-empty model id)"),
                rule("backends: [{name: a, url: \"http://h:1\", models: [m, m]}]", E,
                        "backends[0].models[1]: \"m\" (expected: each value once; also at backends[0].models[0])"),
                rule("backends: [{name: a, url: \"http://h:1\", role: mixed}]", E,
                        "backends[0].role: \"mixed\" (expected: one of unified, prefill, decode)"),
                rule("backends: [{name: a, url: \"http://h:1\", responses_api: openai}]", E,
                        "backends[0].responses_api: \"openai\" (expected: one of converted, native)"),
                rule("backends: [{name: a, url: \"http://h:1\"}, {name: b, url: \"http://h:2\", responses_api: [native]}]",
                        E, "backends[1].responses_api: a list (expected: one of converted, native)"),
                rule("backends: [{name: a, url: \"http://h:1\", weight: 0}]", E,
                        "backends[0].weight: 0 (expected: 1..1000)"),
                rule("backends: [{name: a, url: \"http://h:1\", weight: 1001}]", E,
                        "backends[0].weight: 1001 (expected: 1..1000)"),
                rule("backends: [{name: a, url: \"http://h:1\", weight: heavy}]", E,
                        "backends[0].weight: \"heavy\" (expected: an integer)"),
                rule("backends: [{name: a, url: \"http://h:1\", timeout: 0}]", E,
                        "backends[0].timeout: 0 (expected: a duration > 0)"),
                rule("backends: [{name: a, url: \"http://h:1\", enabled: maybe}]", E,
                        "backends[0].enabled: \"maybe\" (expected: true or false)"),
                rule("backends: [{name: a, url: \"http://h:1\", health_check: {endpoint: health}}]", E,
                        "backends[0].health_check.endpoint: \"health\" (expected: a path starting with /)"),
                rule("backends: [{name: a, url: \"http://h:1\", health_check: on}]", E,
                        "backends[0].health_check: \"on\" (expected: a map of health_checks keys for this backend)"),
                rule("backends: [{name: a, url: \"http://h:1\"}, {name: b, url: \"http://h:1/\"}]", W,
                        "backends[1].url: \"http://h:1\" is also the url of backends[0]; both entries reach one server"),
                rule("backends: [{name: a, url: \"http://h:1\", enabled: false}]", W,
                        "backends: no enabled backend; every /v1 request will get 503"),
                rule("{}", W, "backends: no enabled backend; every /v1 request will get 503"),
                // selection_strategy
                rule("selection_strategy: Fastest", E,
                        "selection_strategy: \"Fastest\" (expected: one of RoundRobin, WeightedRoundRobin, Random,"
                                + " LeastConnections, LeastLatency, ConsistentHash)"),
                // consistent_hash
                rule("selection_strategy: ConsistentHash\nconsistent_hash: {key: cookie}", E,
                        "consistent_hash.key: \"cookie\" (expected: header or first_user_message)"),
                rule("selection_strategy: ConsistentHash\nconsistent_hash: {key: header}", E,
                        "consistent_hash.header: missing (expected: a header name (1..64 token characters) with key: header)"),
                rule("selection_strategy: ConsistentHash\nconsistent_hash: {load_factor: 1}", E,
                        "consistent_hash.load_factor: 1 (expected: a number in (1, 10])"),
                rule("selection_strategy: ConsistentHash\nconsistent_hash: {virtual_nodes: 0}", E,
                        "consistent_hash.virtual_nodes: 0 (expected: 1..1000)"),
                rule("consistent_hash: {key: first_user_message}", W,
                        "consistent_hash: applies only with selection_strategy: ConsistentHash; ignored"),
                // timeouts
                rule("timeouts: {connection: 0s}", E, "timeouts.connection: \"0s\" (expected: a duration from 1ms to 24h)"),
                rule("timeouts: {request: {streaming: {chunk_interval: never}}}", E,
                        "timeouts.request.streaming.chunk_interval: \"never\" (expected: a duration such as 500ms, 30s, 5m, 1h, 1m30s)"),
                rule("timeouts: {request: {standard: {first_byte: 2m, total: 1m}}}", W,
                        "timeouts.request.standard.first_byte: 2m is longer than total (1m); total ends the attempt first"),
                rule("timeouts: {request: {standard: {chunk_interval: 1s}}}", W,
                        "timeouts.request.standard.chunk_interval: unknown key"),
                rule("timeouts: {request: {image_generation: {total: 5m}}}", W,
                        "timeouts.request.image_generation: accepted for compatibility; has no effect in this build;"
                                + " request.standard and request.streaming apply to every route"),
                // retry delays
                rule("retry: {base_delay: 1s, max_delay: 500ms}", E, "retry.max_delay: \"500ms\" (expected: >= retry.base_delay (1s))"),
                rule("retry: {base_delay: 1s, backoff: 1s}", E,
                        "retry.backoff: set together with retry.base_delay (expected: one of them; backoff is its older name)"),
                rule("retry: {jitter: sometimes}", E, "retry.jitter: \"sometimes\" (expected: true or false)"),
                // fallback
                rule("fallback: {fallback_chains: {m: [m]}}", E,
                        "fallback.fallback_chains.m: a list (expected: fallback models other than \"m\" itself)"),
                rule("fallback: {fallback_chains: {m: [a, a]}}", E,
                        "fallback.fallback_chains.m[1]: \"a\" (expected: each value once; also at fallback.fallback_chains.m[0])"),
                rule("fallback: {fallback_policy: {trigger_conditions: {error_codes: [200]}}, fallback_chains: {m: [n]}}", E,
                        "fallback.fallback_policy.trigger_conditions.error_codes[0]: 200 (expected: 400..599)"),
                rule("fallback: {fallback_policy: {max_fallback_attempts: 0}, fallback_chains: {m: [n]}}", E,
                        "fallback.fallback_policy.max_fallback_attempts: 0 (expected: 1..16)"),
                rule("fallback: {enabled: true}", W, "fallback.fallback_chains: no chain: no request ever falls back"),
                rule("fallback: {fallback_policy: {fallback_timeout_multiplier: 1.5}, fallback_chains: {m: [n]}}", W,
                        "fallback.fallback_policy.fallback_timeout_multiplier: accepted for compatibility; has no effect in this"
                                + " build; a fallback model's backends use their own timeouts"),
                // health_checks
                rule("health_checks: {endpoint: v1/models}", E,
                        "health_checks.endpoint: \"v1/models\" (expected: a path starting with /)"),
                rule("health_checks: {interval: 0}", E, "health_checks.interval: 0 (expected: a duration > 0)"),
                rule("health_checks: {unhealthy_threshold: 0}", E,
                        "health_checks.unhealthy_threshold: 0 (expected: > 0)"),
                rule("health_checks: {healthy_threshold: 0}", E, "health_checks.healthy_threshold: 0 (expected: > 0)"),
                rule("health_checks: {max_warmup_duration: 0s}", E,
                        "health_checks.max_warmup_duration: \"0s\" (expected: a duration > 0)"),
                rule("health_checks: {timeout: 40s}", W,
                        "health_checks.timeout: 40s is longer than health_checks.interval (30s); a slow probe delays the next one"),
                // circuit_breaker
                rule("circuit_breaker: {failure_threshold: 0}", E, "circuit_breaker.failure_threshold: 0 (expected: > 0)"),
                rule("circuit_breaker: {failure_rate_threshold: 1.5}", E,
                        "circuit_breaker.failure_rate_threshold: 1.5 (expected: a ratio in (0, 1])"),
                rule("circuit_breaker: {failure_rate_threshold: 0}", E,
                        "circuit_breaker.failure_rate_threshold: 0 (expected: a ratio in (0, 1])"),
                rule("circuit_breaker: {minimum_requests: 0}", E, "circuit_breaker.minimum_requests: 0 (expected: > 0)"),
                rule("circuit_breaker: {window: 0s}", E, "circuit_breaker.window: \"0s\" (expected: a duration > 0)"),
                rule("circuit_breaker: {half_open_success_threshold: 5}", E,
                        "circuit_breaker.half_open_success_threshold: 5 (expected: <= half_open_max_requests (3))"),
                // retry
                rule("retry: {max_attempts: 11}", E, "retry.max_attempts: 11 (expected: 1..10)"),
                rule("retry: {budget_ratio: -0.1}", E, "retry.budget_ratio: -0.1 (expected: a ratio in [0, 1])"),
                rule("retry: {budget_min_per_second: -1}", E, "retry.budget_min_per_second: -1 (expected: >= 0)"),
                // rate_limiting
                rule("rate_limiting: {storage: redis}", W,
                        "rate_limiting.storage: accepted for compatibility; has no effect in this build; limits are kept in memory"),
                rule("rate_limiting: {storage: disk}", E, "rate_limiting.storage: \"disk\" (expected: memory or redis)"),
                rule("rate_limiting: {limits: {per_client: {requests_per_second: 0}}}", E,
                        "rate_limiting.limits.per_client.requests_per_second: 0 (expected: a number > 0)"),
                rule("rate_limiting: {limits: {per_backend: {burst_capacity: 5}}}", E,
                        "rate_limiting.limits.per_backend.requests_per_second: missing (expected: a number > 0)"),
                rule("rate_limiting: {limits: {global: {requests_per_second: 5, burst_capacity: 0}}}", E,
                        "rate_limiting.limits.global.burst_capacity: 0 (expected: > 0)"),
                rule("rate_limiting: {limits: {per_api_key: 5}}", E,
                        "rate_limiting.limits.per_api_key: 5 (expected: a map with requests_per_second and burst_capacity)"),
                rule("rate_limiting: {limits: {per_model: {requests_per_second: 5}}}", W,
                        "rate_limiting.limits.per_model: accepted for compatibility; has no effect in this build"),
                rule("rate_limiting: {whitelist: [\"10.0.0.0/33\"]}", E,
                        "rate_limiting.whitelist[0]: \"10.0.0.0/33\" (expected: an IPv4 or IPv6 address or CIDR)"),
                rule("rate_limiting: {whitelist: [example.com]}", E,
                        "rate_limiting.whitelist[0]: \"example.com\" (expected: an IPv4 or IPv6 address or CIDR)"),
                rule("rate_limiting: {whitelist: [\"fe80::/129\"]}", E,
                        "rate_limiting.whitelist[0]: \"fe80::/129\" (expected: an IPv4 or IPv6 address or CIDR)"),
                rule("rate_limiting: {bypass_keys: [\"\"]}", E,
                        "rate_limiting.bypass_keys[0]: ******** (expected: a non-empty key)"),
                rule("rate_limiting: {enabled: true}", W,
                        "rate_limiting.enabled: true but no limit is set under rate_limiting.limits; nothing is limited"),
                // api_keys
                rule("api_keys: {mode: strict}", E, "api_keys.mode: \"strict\" (expected: permissive or blocking)"),
                rule("api_keys: {api_keys: [{id: a}]}", E, "api_keys.api_keys[0].key: missing (expected: a non-empty key)"),
                rule("api_keys: {api_keys: [{key: \"\"}]}", E, "api_keys.api_keys[0].key: \"\" (expected: a non-empty key)"),
                rule("api_keys: {api_keys: [{key: k1, id: a}, {key: k2, id: a}]}", E,
                        "api_keys.api_keys[1].id: \"a\" (expected: a unique id; also used by api_keys.api_keys[0])"),
                rule("api_keys: {api_keys: [{key: same, id: a}, {key: same, id: b}]}", E,
                        "api_keys.api_keys[1].key: ******** (expected: a unique key value; ids \"a\" and \"b\" share one)"),
                rule("api_keys: {api_keys: [{key: k, scopes: [delete]}]}", E,
                        "api_keys.api_keys[0].scopes[0]: \"delete\" (expected: one of read, write, files, admin)"),
                rule("api_keys: {api_keys: [{key: k, rate_limit: fast}]}", E,
                        "api_keys.api_keys[0].rate_limit: \"fast\" (expected: requests per minute as an integer, or {requests_per_second, burst_capacity})"),
                rule("api_keys: {api_keys: [{key: k, rate_limit: 0}]}", E,
                        "api_keys.api_keys[0].rate_limit: 0 (expected: requests per minute as an integer, or {requests_per_second, burst_capacity})"),
                rule("api_keys: {api_keys: [{key: k, rate_limit: {burst_capacity: 3}}]}", E,
                        "api_keys.api_keys[0].rate_limit.requests_per_second: missing (expected: a number > 0)"),
                rule("api_keys: {api_keys: [{key: k, expires_at: tomorrow}]}", E,
                        "api_keys.api_keys[0].expires_at: \"tomorrow\" (expected: an RFC 3339 timestamp such as 2027-01-01T00:00:00Z)"),
                rule("api_keys: {api_keys: [{key: k, expires_at: \"2020-01-01T00:00:00Z\"}]}", W,
                        "api_keys.api_keys[0].expires_at: 2020-01-01T00:00:00Z is in the past; this key is refused"),
                rule("api_keys: {api_keys: [{key: k, allowed_backends: [nope]}]}", E,
                        "api_keys.api_keys[0].allowed_backends[0]: \"nope\" (expected: the name of a configured backend)"),
                rule("api_keys: {api_keys: [{key: k, allowed_models: [\"\"]}]}", E,
                        "api_keys.api_keys[0].allowed_models[0]: \"\" (expected: a non-empty model id)"),
                rule("api_keys: {mode: blocking}", W, "api_keys: blocking mode with no usable key; every /v1 request will get 401"),
                rule("api_keys: {mode: blocking, api_keys: [{key: k, enabled: false}]}", W,
                        "api_keys: blocking mode with no usable key; every /v1 request will get 401"),
                rule("api_keys: {api_keys_file: no-such-keys.yaml}", E,
                        "api_keys.api_keys_file: \"no-such-keys.yaml\" (expected: a readable YAML file; not found)"),
                // admin
                rule("admin: {auth: {method: oauth, token: t}}", E,
                        "admin.auth.method: \"oauth\" (expected: one of none, bearer_token, basic, api_key)"),
                rule("admin: {auth: {method: bearer_token}}", E,
                        "admin.auth.token: missing (expected: a non-empty token for method bearer_token)"),
                rule("admin: {auth: {method: bearer, token: \"\"}}", E,
                        "admin.auth.token: \"\" (expected: a non-empty token for method bearer_token)"),
                rule("admin: {auth: {method: basic, password: p}}", E,
                        "admin.auth.username: missing (expected: a non-empty username for method basic)"),
                rule("admin: {auth: {method: basic, username: u}}", E,
                        "admin.auth.password: missing (expected: a non-empty password for method basic)"),
                rule("admin: {auth: {method: api_key}}", E,
                        "admin.auth.api_key: missing (expected: a non-empty api_key for method api_key)"),
                rule("admin: {auth: {method: none}}", W, "admin.auth.method: admin API is open without authentication"),
                rule("backends: [{name: a, url: \"http://h:1\", api_key: \"${UNSET_BACKEND_KEY}\"}]", W,
                        "backends[0].api_key: ${UNSET_BACKEND_KEY} is not set; substituted an empty string"),
                rule("admin: {auth: {method: bearer_token, token: \"${UNSET_ADMIN_TOKEN}\"}}", E,
                        "admin.auth.token: \"\" (expected: a non-empty token for method bearer_token)"),
                rule("admin: on", E, "admin: \"on\" (expected: a map with enabled and auth)"),
                // disaggregated_serving
                rule("disaggregated_serving: {enabled: true, fallback_to_unified: false}\n"
                                + "backends: [{name: p, url: \"http://h:1\", role: prefill}]", E,
                        "disaggregated_serving.enabled: true (expected: an enabled backend with role prefill and one with role decode,"
                                + " or fallback_to_unified: true; none has role decode)"),
                rule("disaggregated_serving: {enabled: true}\n"
                                + "backends: [{name: d, url: \"http://h:1\", role: decode}]", W,
                        "disaggregated_serving.enabled: no enabled backend has role prefill; requests are served unified (fallback_to_unified)"),
                rule("disaggregated_serving: {enabled: true, fallback_to_unified: false}", E,
                        "disaggregated_serving.enabled: true (expected: an enabled backend with role prefill and one with role decode,"
                                + " or fallback_to_unified: true; none has role prefill or decode)"),
                rule("backends: [{name: p, url: \"http://h:1\", role: prefill}]", W,
                        "backends[0].role: \"prefill\" is ignored while disaggregated_serving is disabled; the backend serves requests as unified"),
                // logging
                rule("logging: {level: verbose}", E, "logging.level: \"verbose\" (expected: one of trace, debug, info, warn, error)"),
                rule("logging: {format: xml}", E, "logging.format: \"xml\" (expected: text or json)"),
                // metrics
                rule("metrics: {endpoint: metrics}", E, "metrics.endpoint: \"metrics\" (expected: a path starting with /)"),
                rule("metrics: {endpoint: /v1/metrics}", E,
                        "metrics.endpoint: \"/v1/metrics\" (expected: a path outside /, /v1/, /admin/ and /health)"),
                rule("metrics: {endpoint: /admin/metrics}", E,
                        "metrics.endpoint: \"/admin/metrics\" (expected: a path outside /, /v1/, /admin/ and /health)"),
                rule("metrics: {endpoint: /healthz}", E,
                        "metrics.endpoint: \"/healthz\" (expected: a path outside /, /v1/, /admin/ and /health)"),
                rule("metrics: {persistence: {enabled: true}}", W,
                        "metrics.persistence: accepted for compatibility; has no effect in this build"),
                rule("metrics: {cardinality_limit: {max_labels_per_metric: 100}}", W,
                        "metrics.cardinality_limit: accepted for compatibility; has no effect in this build"),
                rule("metrics: {optional_metrics: {enable_detailed_errors: true}}", W,
                        "metrics.optional_metrics: accepted for compatibility; has no effect in this build"),
                // dynamo
                rule("dynamo: {enabled: maybe}", E, "dynamo.enabled: \"maybe\" (expected: true or false)"),
                rule("dynamo: {enabled: true, discovery: {etcd: {endpoints: [\"http://e:2379\"]}}}", W,
                        "dynamo.discovery: section is not handled by this build; it is parsed but inactive"),
                // sections of the Rust router that this build does not implement
                rule("webui: {enabled: true}", W, "webui: accepted for compatibility; has no effect in this build"),
                rule("model_metadata_file: models.yaml", W,
                        "model_metadata_file: accepted for compatibility; has no effect in this build"),
                // global_prompts
                rule("global_prompts: {default: x, merge_strategy: sideways}", E,
                        "global_prompts.merge_strategy: \"sideways\" (expected: one of prepend, append, replace)"),
                rule("global_prompts: {models: {m1: {}}}", E,
                        "global_prompts.models.m1: a map (expected: a map with prompt or prompt_file)"),
                rule("global_prompts: {backends: {a: be brief}}", E,
                        "global_prompts.backends.a: \"be brief\" (expected: a map with prompt or prompt_file)"),
                rule("global_prompts: {backends: {nope: {prompt: x}}}", W,
                        "global_prompts.backends.nope: names no backend in backends; it applies to none"),
                rule("global_prompts: {default: x, separator: [a]}", E,
                        "global_prompts.separator: a list (expected: a string)"),
                rule("global_prompts: {merge_strategy: append}", W, "global_prompts: no prompt is configured"
                        + " (default, default_file, backends or models); the section does nothing"),
                rule("global_prompts: {defualt: x}", W, "global_prompts.defualt: unknown key (did you mean \"default\"?)"),
                rule("backends: [{name: a, url: \"http://h:1\", requires_single_leading_system: sure}]", E,
                        "backends[0].requires_single_leading_system: \"sure\" (expected: true or false)"),
                rule("tracing: {enabled: true}", W, "tracing: accepted for compatibility; has no effect in this build"),
                rule("cors: {enabled: true}", W, "cors: " + DropInBinders.CORS_REASON),
                rule("caching: {enabled: true}", W, "caching: accepted for compatibility; has no effect in this build"),
                rule("kv_cache_index: {enabled: true}", E, "kv_cache_index: " + RouterConfigBinder.KV_CACHE_INDEX_REASON),
                rule("files: {enabled: true}", W, "files: accepted for compatibility; has no effect in this build"),
                rule("acp: {enabled: true}", W, "acp: accepted for compatibility; has no effect in this build"),
                // unknown keys
                rule("server: {bind_adress: \"0.0.0.0:8080\"}", W,
                        "server.bind_adress: unknown key (did you mean \"bind_address\"?)"),
                rule("server: {bindAddress: \"0.0.0.0:8080\"}", W,
                        "server.bindAddress: unknown key (did you mean \"bind_address\"?)"),
                rule("backend: []", W, "backend: unknown key (did you mean \"backends\"?)"),
                rule("health_checks: {intervall: 5s}", W, "health_checks.intervall: unknown key (did you mean \"interval\"?)"),
                rule("backends: [{name: a, url: \"http://h:1\", wieght: 2}]", W,
                        "backends[0].wieght: unknown key (did you mean \"weight\"?)"),
                rule("server: {zzz: 1}", W, "server.zzz: unknown key"),
                // YAML itself
                rule("server:\n  workers: 1\n  workers: 2", E, "server.workers: duplicate key (expected: each key once per map)"),
                rule("- a\n- b", E, "<root>: a list (expected: a map)"),
                rule("backends: [{name: \"${BROKEN\", url: \"http://h:1\"}]", E,
                        "backends[0].name: \"${BROKEN\" (expected: ${VAR}, ${VAR:-default} or $$ for a literal $)"));
    }

    private static Arguments rule(String yaml, String severity, String expected) {
        return Arguments.of(yaml, severity, expected);
    }

    @ParameterizedTest(name = "[{index}] {2}")
    @MethodSource("rules")
    void reportsTheRuleWithItsPathAndMessage(String yaml, String severity, String expected) {
        // Sections other than backends get a valid backend, so the only problems are the rule's own.
        String document = yaml.startsWith("backends") || yaml.contains("\nbackends") || yaml.startsWith("backend:")
                || yaml.equals("{}") || yaml.startsWith("- ") || yaml.contains("disaggregated_serving")
                ? yaml : ONE_BACKEND + yaml;
        LoadResult result = TestConfigs.load(document);
        var matching = severity.equals(E) ? TestConfigs.errorLines(result) : TestConfigs.warningLines(result);
        assertThat(matching).as("all problems: %s", TestConfigs.lines(result)).contains(expected);
        assertThat(result.ok()).isEqualTo(result.errors().isEmpty());
        if (severity.equals(W)) {
            assertThat(result.errors()).as("a warning rule must not fail the config").isEmpty();
        }
    }

    @Test
    void reportsASyntaxErrorWithItsLine() {
        LoadResult result = TestConfigs.load("server: {bind_address: [unclosed\n");

        assertThat(result.ok()).isFalse();
        assertThat(TestConfigs.errorLines(result)).singleElement().asString()
                .startsWith("<root>: invalid YAML at line 2, column 1:");
    }

    @Test
    void reportsEveryProblemOfADocumentInOnePass() {
        String yaml = """
                server:
                  bind_address: ["127.0.0.1:99999", "unix:relative"]
                  workers: -2
                  bind_adress: x
                backends:
                  - name: "bad name"
                    url: "ftp://h"
                    weight: 0
                  - {name: ok, type: anthropic, url: "http://h:1"}
                selection_strategy: Fastest
                health_checks: {endpoint: nope, interval: 0}
                api_keys:
                  mode: strict
                  api_keys: [{key: "", scopes: [root]}, {key: k, allowed_backends: [ghost]}]
                admin: {auth: {method: basic}}
                logging: {level: loud}
                metrics: {endpoint: /v1/m}
                webui: {enabled: true}
                """;

        LoadResult result = TestConfigs.load(yaml);

        assertThat(result.ok()).isFalse();
        assertThat(TestConfigs.errorLines(result)).containsExactlyInAnyOrder(
                "server.bind_address[0]: \"127.0.0.1:99999\" (expected: a port in 0..65535)",
                "server.bind_address[1]: \"unix:relative\" (expected: unix: followed by an absolute socket path)",
                "server.workers: -2 (expected: >= 0)",
                "backends[0].name: \"bad name\" (expected: a name matching [A-Za-z0-9._-]{1,64})",
                "backends[0].url: \"ftp://h\" (expected: an absolute http or https URL with a host)",
                "backends[0].weight: 0 (expected: 1..1000)",
                "backends[1].type: \"anthropic\" (expected: an OpenAI-wire backend type; anthropic/gemini translation is not in this build)",
                "selection_strategy: \"Fastest\" (expected: one of RoundRobin, WeightedRoundRobin, Random,"
                        + " LeastConnections, LeastLatency, ConsistentHash)",
                "health_checks.interval: 0 (expected: a duration > 0)",
                "health_checks.endpoint: \"nope\" (expected: a path starting with /)",
                "api_keys.mode: \"strict\" (expected: permissive or blocking)",
                "api_keys.api_keys[0].key: \"\" (expected: a non-empty key)",
                "api_keys.api_keys[0].scopes[0]: \"root\" (expected: one of read, write, files, admin)",
                "admin.auth.username: missing (expected: a non-empty username for method basic)",
                "admin.auth.password: missing (expected: a non-empty password for method basic)",
                "logging.level: \"loud\" (expected: one of trace, debug, info, warn, error)",
                "metrics.endpoint: \"/v1/m\" (expected: a path outside /, /v1/, /admin/ and /health)",
                "api_keys.api_keys[1].allowed_backends[0]: \"ghost\" (expected: the name of a configured backend)");
        assertThat(TestConfigs.warningLines(result)).contains(
                "server.bind_adress: unknown key (did you mean \"bind_address\"?)",
                "webui: accepted for compatibility; has no effect in this build");
    }

    @Test
    void reportsWhereEachProblemWasWritten() {
        LoadResult result = TestConfigs.load("backends:\n  - name: a\n    url: ftp://h\n");

        assertThat(result.report()).contains(
                "error: backends[0].url: \"ftp://h\" (expected: an absolute http or https URL with a host) [<config>:3:10]");
    }

    @Test
    void neverShowsAResolvedSecretInAMessage() {
        Map<String, String> env = Map.of("TOKEN", "s3cr3t-token-value", "KEY", "s3cr3t-key-value");
        String yaml = ONE_BACKEND + """
                admin: {auth: {method: oauth, token: "${TOKEN}"}}
                rate_limiting: {bypass_keys: ["${KEY}", {nested: "${KEY}"}]}
                api_keys: {api_keys: [{key: "${KEY}", id: a}, {key: "${KEY}", id: b}]}
                """;

        LoadResult result = TestConfigs.load(yaml, env);

        assertThat(result.errors()).isNotEmpty();
        assertThat(String.join("\n", result.report())).doesNotContain("s3cr3t");
    }
}
