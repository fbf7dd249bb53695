package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.Units;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds the Rust router's sections that this build implements on top of its own keys: {@code timeouts},
 * {@code fallback}, {@code consistent_hash}, and says why {@code cors} has no effect. Their keys and
 * rules are in docs/configuration.md.
 */
final class DropInBinders {
    /** One upstream phase never waits longer (a day): a bound, not a tuning value. */
    static final Duration MAX_TIMEOUT = Duration.ofDays(1);
    static final int MAX_CHAINS = 1024;
    static final int MAX_CHAIN_LENGTH = 16;
    static final String CORS_REASON = "CORS is not implemented in this build: no Access-Control-* headers are sent, "
            + "so a browser page on another origin cannot call the router; put a reverse proxy that adds them in front";
    private static final Pattern HEADER_TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}");

    private DropInBinders() {
    }

    static TimeoutsConfig timeouts(ConfigNode n) {
        if (n.isPresent() && n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with connection and request");
            return TimeoutsConfig.defaults();
        }
        Duration connection = optionalTimeout(n.get("connection"));
        ConfigNode request = n.get("request");
        TimeoutsConfig.Phase standard = phase(request.get("standard"), false);
        TimeoutsConfig.Phase streaming = phase(request.get("streaming"), true);
        for (String key : List.of("image_generation", "model_overrides")) {
            ConfigNode c = request.get(key);
            if (c.isPresent()) {
                c.markUsed();
                c.noEffect(RouterConfigBinder.NO_EFFECT + "; request.standard and request.streaming apply to every route");
            }
        }
        ConfigNode health = n.get("health_check");
        if (health.isPresent()) {
            health.markUsed();
            health.noEffect(RouterConfigBinder.NO_EFFECT + "; probe timing is set by health_checks.timeout and interval");
        }
        return new TimeoutsConfig(connection, new TimeoutsConfig.Request(standard, streaming));
    }

    private static TimeoutsConfig.Phase phase(ConfigNode n, boolean stream) {
        if (n.isPresent() && n.kind() != ConfigNode.Kind.MAP) {
            n.invalid(stream ? "a map with first_byte, chunk_interval and total" : "a map with first_byte and total");
            return TimeoutsConfig.Phase.UNSET;
        }
        Duration firstByte = optionalTimeout(n.get("first_byte"));
        Duration total = optionalTimeout(n.get("total"));
        Duration chunk = stream ? optionalTimeout(n.get("chunk_interval")) : null;
        if (firstByte != null && total != null && firstByte.compareTo(total) > 0) {
            n.get("first_byte").warning(Units.formatDuration(firstByte) + " is longer than total ("
                    + Units.formatDuration(total) + "); total ends the attempt first");
        }
        return new TimeoutsConfig.Phase(firstByte, total, chunk);
    }

    private static @Nullable Duration optionalTimeout(ConfigNode n) {
        if (!n.isPresent()) {
            return null;
        }
        Duration d = n.asDuration(Duration.ZERO, Duration.ofMillis(1), MAX_TIMEOUT);
        return d.isZero() ? null : d;
    }

    static FallbackConfig fallback(ConfigNode n) {
        FallbackConfig d = FallbackConfig.defaults();
        if (!n.isPresent()) {
            return d;
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with enabled, fallback_chains and fallback_policy");
            return d;
        }
        boolean enabled = n.get("enabled").asBool(true); // a written section is meant to act
        Map<String, List<String>> chains = chains(n.get("fallback_chains"));
        ConfigNode policy = n.get("fallback_policy");
        ConfigNode triggers = policy.get("trigger_conditions");
        FallbackConfig.Triggers t = d.fallbackPolicy().triggerConditions();
        List<Integer> codes = errorCodes(triggers.get("error_codes"), t.errorCodes());
        FallbackConfig.Triggers bound = new FallbackConfig.Triggers(codes,
                triggers.get("timeout").asBool(t.timeout()),
                triggers.get("connection_error").asBool(t.connectionError()),
                triggers.get("model_not_found").asBool(t.modelNotFound()),
                triggers.get("circuit_breaker_open").asBool(t.circuitBreakerOpen()));
        int max = policy.get("max_fallback_attempts").asInt(d.fallbackPolicy().maxFallbackAttempts(), 1,
                MAX_CHAIN_LENGTH);
        ConfigNode multiplier = policy.get("fallback_timeout_multiplier");
        if (multiplier.isPresent()) {
            multiplier.markUsed();
            multiplier.noEffect(RouterConfigBinder.NO_EFFECT + "; a fallback model's backends use their own timeouts");
        }
        ConfigNode preserve = policy.get("preserve_parameters");
        if (preserve.isPresent() && !preserve.asBool(true)) {
            preserve.noEffect(RouterConfigBinder.NO_EFFECT + "; the body is always forwarded whole, only model changes");
        }
        ConfigNode settings = n.get("model_settings");
        if (settings.isPresent()) {
            settings.markUsed();
            settings.noEffect(RouterConfigBinder.NO_EFFECT);
        }
        if (enabled && chains.isEmpty()) {
            n.get("fallback_chains").warning("no chain: no request ever falls back");
        }
        return new FallbackConfig(enabled, chains, new FallbackConfig.Policy(bound, max));
    }

    private static Map<String, List<String>> chains(ConfigNode n) {
        if (!n.isPresent()) {
            return Map.of();
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map of model id to a list of fallback model ids");
            return Map.of();
        }
        Map<String, ConfigNode> entries = n.entries();
        if (entries.size() > MAX_CHAINS) {
            n.invalid("at most " + MAX_CHAINS + " chains");
            return Map.of();
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> e : entries.entrySet()) {
            String model = e.getKey();
            ConfigNode list = e.getValue();
            List<String> chain = BackendsBinder.uniqueStrings(list, "a non-empty model id");
            if (chain.size() > MAX_CHAIN_LENGTH) {
                list.invalid("at most " + MAX_CHAIN_LENGTH + " fallback models");
                continue;
            }
            if (chain.contains(model)) {
                list.invalid("fallback models other than " + Problems.render(model) + " itself");
                continue;
            }
            if (model.isBlank()) {
                list.invalid("a chain under a non-empty model id");
                continue;
            }
            if (!chain.isEmpty()) {
                out.put(model, chain);
            }
        }
        return out;
    }

    private static List<Integer> errorCodes(ConfigNode n, List<Integer> defaults) {
        if (!n.isPresent()) {
            return defaults;
        }
        if (n.kind() != ConfigNode.Kind.LIST) {
            n.invalid("a list of HTTP status codes");
            return defaults;
        }
        Set<Integer> out = new LinkedHashSet<>();
        for (ConfigNode e : n.elements()) {
            int code = e.asInt(-1, 400, 599);
            if (code != -1 && !out.add(code)) {
                e.invalid("each code once");
            }
        }
        return new ArrayList<>(out);
    }

    /** Null unless the strategy is {@code ConsistentHash}: the section is read (and checked) either way. */
    static @Nullable ConsistentHashConfig consistentHash(ConfigNode n, SelectionStrategy strategy) {
        ConsistentHashConfig d = ConsistentHashConfig.defaults();
        boolean used = strategy == SelectionStrategy.CONSISTENT_HASH;
        if (!n.isPresent()) {
            return used ? d : null;
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with key, header, load_factor and virtual_nodes");
            return used ? d : null;
        }
        ConsistentHashConfig.Key key = n.get("key").asChoice(d.key(), s -> switch (s.trim()) {
            case "header" -> ConsistentHashConfig.Key.HEADER;
            case "first_user_message" -> ConsistentHashConfig.Key.FIRST_USER_MESSAGE;
            default -> null;
        }, "header or first_user_message");
        ConfigNode headerNode = n.get("header");
        String header = headerNode.asStringOrNull();
        if (key == ConsistentHashConfig.Key.HEADER) {
            if (header == null || !HEADER_TOKEN.matcher(header.trim()).matches()) {
                headerNode.invalid("a header name (1..64 token characters) with key: header");
                header = null;
                key = d.key();
            } else {
                header = header.trim();
            }
        } else if (headerNode.isPresent()) {
            headerNode.noEffect("applies only with key: header; ignored");
            header = null;
        }
        ConfigNode factorNode = n.get("load_factor");
        double factor = factorNode.asDouble(d.loadFactor());
        if (!(factor > 1.0 && factor <= 10.0)) {
            factorNode.invalid("a number in (1, 10]");
            factor = d.loadFactor();
        }
        int vnodes = n.get("virtual_nodes").asInt(d.virtualNodes(), 1, 1000);
        if (!used) {
            n.noEffect("applies only with selection_strategy: ConsistentHash; ignored");
            return null;
        }
        return new ConsistentHashConfig(key, header, factor, vnodes);
    }

    static void cors(ConfigNode n) {
        if (n.isPresent()) {
            n.markUsed();
            n.noEffect(CORS_REASON);
        }
    }

    /** A chain model that no enabled backend serves can never take a request. */
    static void checkChains(FallbackConfig fallback, List<BackendConfig> backends, Problems problems) {
        if (!fallback.enabled()) {
            return;
        }
        for (Map.Entry<String, List<String>> e : fallback.fallbackChains().entrySet()) {
            for (int i = 0; i < e.getValue().size(); i++) {
                String model = e.getValue().get(i);
                boolean served = backends.stream().anyMatch(b -> b.enabled() && !b.internal() && b.serves(model));
                if (!served) {
                    problems.warning("fallback.fallback_chains." + e.getKey() + "[" + i + "]",
                            Problems.render(model) + " is served by no enabled backend; the chain skips it");
                }
            }
        }
    }
}
