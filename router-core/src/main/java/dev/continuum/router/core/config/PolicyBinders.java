package dev.continuum.router.core.config;

import dev.continuum.router.core.net.IpLiterals;
import dev.continuum.router.core.config.internal.Units;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Binds the per-backend policies: {@code health_checks}, {@code circuit_breaker}, {@code retry}, {@code rate_limiting}. */
final class PolicyBinders {
    /** A retry never waits longer: beyond it the client has long given up. */
    static final Duration MAX_DELAY = Duration.ofMinutes(10);

    private PolicyBinders() {
    }

    static HealthCheckConfig healthChecks(ConfigNode n) {
        return healthChecks(n, HealthCheckConfig.defaults());
    }

    /** {@code n} over {@code d}: a key not written keeps {@code d}'s value (a backend's own {@code health_check}). */
    static HealthCheckConfig healthChecks(ConfigNode n, HealthCheckConfig d) {
        boolean enabled = n.get("enabled").asBool(d.enabled());
        ConfigNode intervalNode = n.get("interval");
        var interval = intervalNode.asPositiveDuration(d.interval());
        ConfigNode timeoutNode = n.get("timeout");
        var timeout = timeoutNode.asPositiveDuration(d.timeout());
        int unhealthy = n.get("unhealthy_threshold").asInt(d.unhealthyThreshold(), 1, Integer.MAX_VALUE);
        int healthy = n.get("healthy_threshold").asInt(d.healthyThreshold(), 1, Integer.MAX_VALUE);
        ConfigNode endpointNode = n.get("endpoint");
        String endpoint = endpointNode.asString(d.endpoint());
        if (!endpoint.startsWith("/")) {
            endpointNode.invalid("a path starting with /");
            endpoint = d.endpoint();
        }
        var warmupInterval = n.get("warmup_check_interval").asPositiveDuration(d.warmupCheckInterval());
        var maxWarmup = n.get("max_warmup_duration").asPositiveDuration(d.maxWarmupDuration());
        if (timeout.compareTo(interval) > 0) {
            timeoutNode.warning(Units.formatDuration(timeout) + " is longer than health_checks.interval ("
                    + Units.formatDuration(interval) + "); a slow probe delays the next one");
        }
        return new HealthCheckConfig(enabled, interval, timeout, unhealthy, healthy, endpoint, warmupInterval, maxWarmup);
    }

    static CircuitBreakerConfig circuitBreaker(ConfigNode n) {
        CircuitBreakerConfig d = CircuitBreakerConfig.defaults();
        boolean enabled = n.get("enabled").asBool(d.enabled());
        int failureThreshold = n.get("failure_threshold").asInt(d.failureThreshold(), 1, Integer.MAX_VALUE);
        ConfigNode rateNode = n.get("failure_rate_threshold");
        double rate = rateNode.asDouble(d.failureRateThreshold());
        if (!(rate > 0 && rate <= 1)) {
            rateNode.invalid("a ratio in (0, 1]");
            rate = d.failureRateThreshold();
        }
        int minimumRequests = n.get("minimum_requests").asInt(d.minimumRequests(), 1, Integer.MAX_VALUE);
        var window = n.get("window").asPositiveDuration(d.window());
        var timeout = n.get("timeout").asPositiveDuration(d.timeout());
        int halfOpenMax = n.get("half_open_max_requests").asInt(d.halfOpenMaxRequests(), 1, Integer.MAX_VALUE);
        ConfigNode successNode = n.get("half_open_success_threshold");
        int halfOpenSuccess = successNode.asInt(d.halfOpenSuccessThreshold(), 1, Integer.MAX_VALUE);
        if (halfOpenSuccess > halfOpenMax) {
            successNode.invalid("<= half_open_max_requests (" + halfOpenMax + ")");
            halfOpenSuccess = Math.min(d.halfOpenSuccessThreshold(), halfOpenMax);
        }
        return new CircuitBreakerConfig(enabled, failureThreshold, rate, minimumRequests, window, timeout,
                halfOpenMax, halfOpenSuccess);
    }

    static RetryConfig retry(ConfigNode n) {
        RetryConfig d = RetryConfig.defaults();
        boolean enabled = n.get("enabled").asBool(d.enabled());
        int maxAttempts = n.get("max_attempts").asInt(d.maxAttempts(), 1, 10);
        ConfigNode ratioNode = n.get("budget_ratio");
        double ratio = ratioNode.asDouble(d.budgetRatio());
        if (!(ratio >= 0 && ratio <= 1)) {
            ratioNode.invalid("a ratio in [0, 1]");
            ratio = d.budgetRatio();
        }
        int minPerSecond = n.get("budget_min_per_second").asInt(d.budgetMinPerSecond(), 0, Integer.MAX_VALUE);
        ConfigNode baseNode = n.get("base_delay");
        ConfigNode legacyNode = n.get("backoff");
        if (baseNode.isPresent() && legacyNode.isPresent()) {
            legacyNode.error("set together with retry.base_delay (expected: one of them; backoff is its older name)");
        }
        var base = (baseNode.isPresent() ? baseNode : legacyNode).asDuration(d.baseDelay(), Duration.ZERO, MAX_DELAY);
        ConfigNode maxNode = n.get("max_delay");
        // Unwritten, the cap never undercuts a longer base_delay.
        var max = maxNode.isPresent() ? maxNode.asDuration(d.maxDelay(), Duration.ZERO, MAX_DELAY)
                : base.compareTo(d.maxDelay()) > 0 ? base : d.maxDelay();
        if (max.compareTo(base) < 0) {
            maxNode.invalid(">= retry.base_delay (" + Units.formatDuration(base) + ")");
            max = base;
        }
        // The older key meant one fixed wait: written alone, it keeps meaning that.
        boolean legacy = legacyNode.isPresent() && !baseNode.isPresent();
        boolean exponential = n.get("exponential_backoff").asBool(!legacy && d.exponentialBackoff());
        boolean jitter = n.get("jitter").asBool(!legacy && d.jitter());
        return new RetryConfig(enabled, maxAttempts, ratio, minPerSecond, base, max, exponential, jitter);
    }

    static RateLimitingConfig rateLimiting(ConfigNode n) {
        RateLimitingConfig d = RateLimitingConfig.defaults();
        boolean enabled = n.get("enabled").asBool(d.enabled());
        ConfigNode storage = n.get("storage");
        String kind = storage.asChoice("memory", s -> {
            String v = s.toLowerCase(Locale.ROOT);
            return v.equals("memory") || v.equals("redis") ? v : null;
        }, "memory or redis");
        if (kind.equals("redis")) {
            storage.noEffect(RouterConfigBinder.NO_EFFECT + "; limits are kept in memory");
            n.get("redis").markUsed();
        }
        ConfigNode limits = n.get("limits");
        RateLimit perClient = tier(limits.get("per_client"));
        RateLimit perBackend = tier(limits.get("per_backend"));
        RateLimit perApiKey = tier(limits.get("per_api_key"));
        RateLimit global = tier(limits.get("global"));
        ConfigNode perModel = limits.get("per_model");
        if (perModel.isPresent()) {
            perModel.markUsed();
            perModel.noEffect(RouterConfigBinder.NO_EFFECT);
        }
        List<String> whitelist = new ArrayList<>();
        ConfigNode wl = n.get("whitelist");
        if (wl.kind() == ConfigNode.Kind.SCALAR || wl.kind() == ConfigNode.Kind.MAP) {
            wl.invalid("a list of IP addresses or CIDRs");
        } else {
            for (ConfigNode e : wl.elements()) {
                String s = e.asStringOrNull();
                if (s == null) {
                    continue;
                }
                if (!IpLiterals.isAddressOrCidr(s.trim())) {
                    e.invalid("an IPv4 or IPv6 address or CIDR");
                    continue;
                }
                whitelist.add(s.trim());
            }
        }
        List<Secret> bypass = new ArrayList<>();
        ConfigNode bk = n.get("bypass_keys");
        if (bk.kind() == ConfigNode.Kind.SCALAR || bk.kind() == ConfigNode.Kind.MAP) {
            bk.invalid("a list of API keys");
        } else {
            for (ConfigNode e : bk.elements()) {
                Secret s = e.asSecret();
                if (s == null || s.reveal().isEmpty()) {
                    e.invalid("a non-empty key");
                    continue;
                }
                bypass.add(s);
            }
        }
        return new RateLimitingConfig(enabled, perClient, perBackend, perApiKey, global, whitelist, bypass);
    }

    /** {@code {requests_per_second, burst_capacity}}; burst defaults to the rate rounded up. */
    static @Nullable RateLimit tier(ConfigNode n) {
        if (!n.isPresent()) {
            return null;
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with requests_per_second and burst_capacity");
            return null;
        }
        ConfigNode rpsNode = n.get("requests_per_second");
        if (!rpsNode.isPresent()) {
            rpsNode.invalid("a number > 0");
            n.get("burst_capacity").asInt(1);
            return null;
        }
        double rps = rpsNode.asDouble(Double.NaN); // NaN: not a number, already reported
        boolean ok = rps > 0;
        if (!Double.isNaN(rps) && !ok) {
            rpsNode.invalid("a number > 0");
        }
        int burstDefault = ok ? (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.ceil(rps))) : 1;
        int burst = n.get("burst_capacity").asInt(-1, 1, Integer.MAX_VALUE);
        if (burst == -1) {
            if (n.get("burst_capacity").isPresent()) {
                ok = false;
            }
            burst = burstDefault;
        }
        return ok ? new RateLimit(rps, burst) : null;
    }
}
