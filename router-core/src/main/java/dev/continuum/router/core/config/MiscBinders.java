package dev.continuum.router.core.config;

import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Binds the small sections: {@code selection_strategy}, {@code disaggregated_serving}, {@code logging}, {@code metrics}. */
final class MiscBinders {
    static final String STRATEGIES =
            "one of RoundRobin, WeightedRoundRobin, Random, LeastConnections, LeastLatency, ConsistentHash";
    static final String LEVELS = "one of trace, debug, info, warn, error";
    /** Paths the metrics endpoint must stay clear of, so it never shadows a route. */
    static final List<String> RESERVED_PREFIXES = List.of("/v1", "/admin", "/health");

    private MiscBinders() {
    }

    static SelectionStrategy selectionStrategy(ConfigNode n) {
        if (!n.isPresent()) {
            return SelectionStrategy.ROUND_ROBIN;
        }
        String text = n.asStringOrNull();
        if (text == null) {
            return SelectionStrategy.ROUND_ROBIN;
        }
        String key = normalize(text);
        for (SelectionStrategy s : SelectionStrategy.values()) {
            if (normalize(s.yamlName()).equals(key)) {
                return s;
            }
        }
        n.invalid(STRATEGIES);
        return SelectionStrategy.ROUND_ROBIN;
    }

    /** {@code RoundRobin}, {@code round_robin}, {@code round-robin} and {@code roundrobin} are one name. */
    private static String normalize(String s) {
        return s.trim().toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
    }

    static DisaggregatedServingConfig disaggregatedServing(ConfigNode n) {
        DisaggregatedServingConfig d = DisaggregatedServingConfig.defaults();
        return new DisaggregatedServingConfig(n.get("enabled").asBool(d.enabled()),
                n.get("fallback_to_unified").asBool(d.fallbackToUnified()));
    }

    static LoggingConfig logging(ConfigNode n) {
        LoggingConfig d = LoggingConfig.defaults();
        LoggingConfig.Level level = n.get("level").asChoice(d.level(), MiscBinders::level, LEVELS);
        LoggingConfig.Format format = n.get("format").asChoice(d.format(), s -> switch (s.toLowerCase(Locale.ROOT)) {
            case "text" -> LoggingConfig.Format.TEXT;
            case "json" -> LoggingConfig.Format.JSON;
            default -> null;
        }, "text or json");
        return new LoggingConfig(level, format);
    }

    static LoggingConfig.@Nullable Level level(String s) {
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "trace" -> LoggingConfig.Level.TRACE;
            case "debug" -> LoggingConfig.Level.DEBUG;
            case "info" -> LoggingConfig.Level.INFO;
            case "warn", "warning" -> LoggingConfig.Level.WARN;
            case "error" -> LoggingConfig.Level.ERROR;
            default -> null;
        };
    }

    static MetricsConfig metrics(ConfigNode n) {
        MetricsConfig d = MetricsConfig.defaults();
        boolean enabled = n.get("enabled").asBool(d.enabled());
        ConfigNode endpointNode = n.get("endpoint");
        String endpoint = endpointNode.asString(d.endpoint()).trim();
        if (!endpoint.startsWith("/")) {
            endpointNode.invalid("a path starting with /");
            endpoint = d.endpoint();
        } else if (collides(endpoint)) {
            endpointNode.invalid("a path outside /, /v1/, /admin/ and /health");
            endpoint = d.endpoint();
        }
        for (String compat : List.of("cardinality_limit", "optional_metrics", "persistence")) {
            ConfigNode c = n.get(compat);
            if (c.isPresent()) {
                c.markUsed();
                c.noEffect(RouterConfigBinder.NO_EFFECT);
            }
        }
        return new MetricsConfig(enabled, endpoint);
    }

    static boolean collides(String endpoint) {
        if (endpoint.equals("/")) {
            return true;
        }
        for (String prefix : RESERVED_PREFIXES) {
            if (endpoint.equals(prefix) || endpoint.startsWith(prefix + "/")
                    || (prefix.equals("/health") && endpoint.startsWith(prefix))) {
                return true;
            }
        }
        return false;
    }
}
