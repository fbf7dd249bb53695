package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeNode;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Binds a whole document: every section in one pass (bad values reported and replaced by defaults so
 * later sections are still checked), then the cross-section checks, then the unknown-key warnings.
 */
final class RouterConfigBinder {
    static final String NO_EFFECT = "accepted for compatibility; has no effect in this build";
    /** Sections of the Rust router that this build reads without acting on them. */
    static final List<String> COMPATIBILITY_SECTIONS = List.of("model_metadata_file", "webui", "tracing", "caching", "files", "acp", "smart_routing",
            "guardrails");

    /**
     * The Rust router's top-level {@code kv_cache_index}: its format is not published, so reading it as this build's
     * {@code dynamo.kv_cache_index} could steer requests by a guess; refused instead of accepted and ignored.
     */
    static final String KV_CACHE_INDEX_REASON = "refused: this build does not read the Rust router's top-level"
            + " kv_cache_index (its format is not published); configure the backend KV cache index and its backend"
            + " selection under dynamo.kv_cache_index (sources, selection)";

    private RouterConfigBinder() {
    }

    /** Always returns a config; it is only valid when {@code ctx.problems} has no error. */
    static RouterConfig bind(TreeNode root, BindContext ctx, @Nullable Path source) {
        // First, so every "has no effect" finding below already knows whether it is an error.
        if (root.get("server").get("strict_config").asBool(false)) {
            ctx.problems.strict(true);
        }
        for (String key : COMPATIBILITY_SECTIONS) {
            ConfigNode section = root.get(key);
            if (section.isPresent()) {
                section.markUsed();
                section.noEffect(NO_EFFECT);
            }
        }
        ConfigNode rustKvIndex = root.get("kv_cache_index");
        if (rustKvIndex.isPresent()) {
            rustKvIndex.markUsed();
            rustKvIndex.error(KV_CACHE_INDEX_REASON);
        }
        DropInBinders.cors(root.get("cors"));
        ServerConfig server = ServerBinder.bind(root.get("server"));
        HealthCheckConfig health = PolicyBinders.healthChecks(root.get("health_checks"));
        List<BackendConfig> backends = BackendsBinder.bind(root.get("backends"), ctx.backendPaths, health);
        SelectionStrategy strategy = MiscBinders.selectionStrategy(root.get("selection_strategy"));
        CircuitBreakerConfig breaker = PolicyBinders.circuitBreaker(root.get("circuit_breaker"));
        RetryConfig retry = PolicyBinders.retry(root.get("retry"));
        RateLimitingConfig rateLimiting = PolicyBinders.rateLimiting(root.get("rate_limiting"));
        ApiKeysConfig apiKeys = ApiKeysBinder.bind(root.get("api_keys"), ctx);
        AdminConfig admin = AdminBinder.bind(root.get("admin"));
        DisaggregatedServingConfig disaggregated = MiscBinders.disaggregatedServing(root.get("disaggregated_serving"));
        LoggingConfig logging = MiscBinders.logging(root.get("logging"));
        MetricsConfig metrics = MiscBinders.metrics(root.get("metrics"));
        DynamoConfig dynamo = DynamoBinder.bind(root.get("dynamo"), ctx);
        TimeoutsConfig timeouts = DropInBinders.timeouts(root.get("timeouts"));
        FallbackConfig fallback = DropInBinders.fallback(root.get("fallback"));
        @Nullable ConsistentHashConfig consistentHash = DropInBinders.consistentHash(root.get("consistent_hash"), strategy);
        GlobalPromptsConfig globalPrompts = GlobalPromptsBinder.bind(root.get("global_prompts"), backends, ctx);
        RouterConfig config = new RouterConfig(server, backends, strategy, health, breaker, retry, rateLimiting,
                apiKeys, admin, disaggregated, logging, metrics, dynamo, timeouts, fallback, consistentHash,
                globalPrompts, source);
        CrossChecks.run(config, ctx);
        DropInBinders.checkChains(fallback, backends, ctx.problems);
        root.reportUnknownKeys();
        ctx.extraRoots.forEach(TreeNode::reportUnknownKeys);
        return config;
    }
}
