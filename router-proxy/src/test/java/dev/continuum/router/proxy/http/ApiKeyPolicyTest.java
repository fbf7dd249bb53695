package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ApiKeysConfig;
import dev.continuum.router.core.config.RateLimit;
import dev.continuum.router.core.config.RateLimitingConfig;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ApiKeyPolicyTest {
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    private void start(ConfigBuilder cfg) {
        router = harness.start(cfg.build(), s -> s.proxyOptions(
                ProxyOptions.defaults().withWallClock(Clock.fixed(NOW, ZoneOffset.UTC))));
    }

    private ConfigBuilder blocking() {
        ConfigBuilder cfg = ConfigBuilder.create()
                .backend("a", a.baseUrl(), "m", "m2").backend("b", b.baseUrl(), "m");
        cfg.apiKeys = new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null, List.of(
                ConfigBuilder.key("team-a", "sk-team-a"),
                ConfigBuilder.key("only-m2", "sk-only-m2", List.of(), List.of("m2"), null, true, null),
                ConfigBuilder.key("only-b", "sk-only-b", List.of("b"), List.of(), null, true, null),
                ConfigBuilder.key("only-c", "sk-only-c", List.of("c"), List.of(), null, true, null),
                ConfigBuilder.key("expired", "sk-expired", List.of(), List.of(), null, true, NOW.minusSeconds(1)),
                ConfigBuilder.key("disabled", "sk-disabled", List.of(), List.of(), null, false, null),
                ConfigBuilder.key("slow", "sk-slow", List.of(), List.of(), new RateLimit(0.01, 1), true, null)));
        return cfg;
    }

    @Test
    void blockingModeRefusesMissingUnknownDisabledAndExpiredKeys() {
        start(blocking());

        assertUnauthorized(router.chat("m"));
        assertUnauthorized(router.chat("m", "authorization", "Bearer sk-nope"));
        assertUnauthorized(router.chat("m", "authorization", "Bearer sk-disabled"));
        assertUnauthorized(router.chat("m", "authorization", "Bearer sk-expired"));
        assertUnauthorized(router.get("/v1/models"));
        assertThat(a.completionCount() + b.completionCount()).isZero();
    }

    private static void assertUnauthorized(HttpResponse<String> res) {
        assertThat(res.statusCode()).isEqualTo(401);
        assertThat(res.body()).contains("\"type\":\"authentication_error\"").contains("\"code\":\"invalid_api_key\"");
    }

    @Test
    void aValidKeyPassesAndIsNotForwardedUpstream() {
        start(blocking());

        assertThat(router.chat("m", "authorization", "Bearer sk-team-a").statusCode()).isEqualTo(200);
        assertThat(router.chat("m", "x-api-key", "sk-team-a").statusCode()).isEqualTo(200);

        assertThat(a.completionRequests()).allSatisfy(r -> {
            assertThat(r.hasHeader("authorization")).isFalse();
            assertThat(r.hasHeader("x-api-key")).isFalse();
        });
        assertThat(b.completionRequests()).allSatisfy(r -> assertThat(r.hasHeader("authorization")).isFalse());
    }

    @Test
    void allowedModelsRefuseOtherModelsWith403() {
        start(blocking());

        HttpResponse<String> res = router.chat("m", "authorization", "Bearer sk-only-m2");

        assertThat(res.statusCode()).isEqualTo(403);
        assertThat(res.body()).contains("\"type\":\"permission_error\"");
        assertThat(router.chat("m2", "authorization", "Bearer sk-only-m2").statusCode()).isEqualTo(200);
    }

    @Test
    void allowedBackendsNarrowTheCandidates() {
        start(blocking());

        for (int i = 0; i < 4; i++) {
            HttpResponse<String> res = router.chat("m", "authorization", "Bearer sk-only-b");
            assertThat(res.body()).contains("\"upstream\":\"b\"");
        }
        assertThat(a.completionCount()).isZero();
        assertThat(router.chat("m", "authorization", "Bearer sk-only-c").statusCode()).isEqualTo(403);
    }

    @Test
    void modelListFollowsTheKeyPolicy() {
        start(blocking());

        assertThat(router.get("/v1/models", "authorization", "Bearer sk-only-m2").body())
                .contains("\"id\":\"m2\"").doesNotContain("\"id\":\"m\"");
    }

    @Test
    void aKeyOverItsRateLimitGets429WithRetryAfter() {
        start(blocking());

        assertThat(router.chat("m", "authorization", "Bearer sk-slow").statusCode()).isEqualTo(200);
        HttpResponse<String> res = router.chat("m", "authorization", "Bearer sk-slow");

        assertThat(res.statusCode()).isEqualTo(429);
        assertThat(res.body()).contains("\"code\":\"rate_limit_exceeded\"");
        assertThat(Long.parseLong(res.headers().firstValue("retry-after").orElseThrow())).isGreaterThanOrEqualTo(1);
        assertThat(router.scrape()).contains("continuum_rate_limited_total{tier=\"api_key\"} 1.0");
    }

    @Test
    void permissiveModePassesMissingKeysButRefusesUnknownOnes() {
        ConfigBuilder cfg = blocking();
        cfg.apiKeys = new ApiKeysConfig(ApiKeysConfig.Mode.PERMISSIVE, null, cfg.apiKeys.keys());
        start(cfg);

        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        assertThat(router.chat("m", "authorization", "Bearer sk-nope").statusCode()).isEqualTo(401);
        assertThat(router.chat("m2", "authorization", "Bearer sk-only-m2").statusCode()).isEqualTo(200);
        assertThat(router.chat("m", "authorization", "Bearer sk-only-m2").statusCode()).isEqualTo(403);
    }

    @Test
    void perClientAndGlobalLimitsApplyUnlessWhitelisted() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.rateLimiting = new RateLimitingConfig(true, new RateLimit(0.01, 2), null, null, null, List.of(), List.of());
        start(cfg);
        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        HttpResponse<String> limited = router.chat("m");
        assertThat(limited.statusCode()).isEqualTo(429);
        assertThat(limited.headers().firstValue("retry-after")).isPresent();
        router.close();

        cfg.rateLimiting = new RateLimitingConfig(true, new RateLimit(0.01, 1), null, null, new RateLimit(0.01, 1),
                List.of("127.0.0.0/8"), List.of());
        start(cfg);
        for (int i = 0; i < 3; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }
        router.close();

        cfg.rateLimiting = new RateLimitingConfig(true, null, null, null, new RateLimit(0.01, 1), List.of(), List.of());
        start(cfg);
        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        assertThat(router.chat("m").statusCode()).isEqualTo(429);
        assertThat(router.scrape()).contains("continuum_rate_limited_total{tier=\"global\"} 1.0");
    }

    @Test
    void perBackendLimitMovesTrafficThen429() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m");
        cfg.rateLimiting = new RateLimitingConfig(true, null, new RateLimit(0.01, 1), null, null, List.of(), List.of());
        start(cfg);

        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        assertThat(router.chat("m").statusCode()).isEqualTo(200);
        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(429);
        assertThat(a.completionCount()).isEqualTo(1);
        assertThat(b.completionCount()).isEqualTo(1);
        assertThat(router.scrape()).contains("continuum_rate_limited_total{tier=\"backend\"} 1.0");
    }
}
