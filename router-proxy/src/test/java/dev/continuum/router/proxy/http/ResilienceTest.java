package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.CircuitBreakerConfig;
import dev.continuum.router.core.config.RetryConfig;
import dev.continuum.router.proxy.CircuitState;
import dev.continuum.router.proxy.HealthState;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.VirtualTimer;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResilienceTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    private ConfigBuilder twoBackends() {
        return ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m");
    }

    @Test
    void opensTheBreakerOfADownBackendAndMovesTrafficToAnother() {
        ConfigBuilder cfg = twoBackends().noRetry();
        cfg.breaker = new CircuitBreakerConfig(true, 2, 0.5, 100, Duration.ofSeconds(60), Duration.ofSeconds(60), 1, 1);
        router = harness.start(cfg.build());
        a.stop(); // connections to a are refused from now on

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            statuses.add(router.chat("m").statusCode());
        }

        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.OPEN);
        assertThat(statuses.stream().filter(s -> s == 502).count()).isEqualTo(2);
        assertThat(statuses.subList(4, 10)).containsOnly(200);
        assertThat(b.completionCount()).isEqualTo(8);
        assertThat(router.scrape()).contains("continuum_backend_circuit_state{backend=\"a\"} 2.0")
                .contains("continuum_backend_circuit_state{backend=\"b\"} 0.0");
    }

    @Test
    void halfOpensAfterTheTimeoutAndClosesWhenTheBackendRecovered() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m").noRetry();
        cfg.breaker = new CircuitBreakerConfig(true, 1, 0.5, 100, Duration.ofSeconds(60), Duration.ofMillis(200), 1, 1);
        router = harness.start(cfg.build());
        a.enqueue(Reply.status(500, "{}"));

        assertThat(router.chat("m").statusCode()).isEqualTo(500);
        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.OPEN);
        assertThat(router.chat("m").statusCode()).isEqualTo(503);

        await().atMost(Duration.ofSeconds(5)).until(() -> router.chat("m").statusCode() == 200);
        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.CLOSED);
    }

    @Test
    void healthChecksMarkABackendDownAndBackUp() {
        router = harness.start(twoBackends().health(Duration.ofMillis(50), 2, 2).build());
        await().until(() -> router.backend("a").health() == HealthState.HEALTHY);

        a.healthStatus(500);
        await().atMost(Duration.ofSeconds(5)).until(() -> router.backend("a").health() == HealthState.DOWN);
        assertThat(router.scrape()).contains("continuum_backend_healthy{backend=\"a\"} 0.0");
        for (int i = 0; i < 4; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }
        assertThat(a.completionCount()).isZero();

        a.healthStatus(503);
        await().atMost(Duration.ofSeconds(5)).until(() -> router.backend("a").health() == HealthState.WARMING_UP);

        a.healthStatus(200);
        await().atMost(Duration.ofSeconds(5)).until(() -> router.backend("a").health() == HealthState.HEALTHY);
        assertThat(router.scrape()).contains("continuum_backend_healthy{backend=\"a\"} 1.0");
        for (int i = 0; i < 4; i++) {
            router.chat("m");
        }
        assertThat(a.completionCount()).isEqualTo(2);
    }

    @Test
    void aBackendWarmingUpForTooLongIsMarkedDown() {
        ConfigBuilder cfg = twoBackends();
        cfg.health = new dev.continuum.router.core.config.HealthCheckConfig(true, Duration.ofMillis(50),
                Duration.ofMillis(500), 3, 1, "/v1/models", Duration.ofMillis(20), Duration.ofMillis(300));
        a.healthStatus(503);
        router = harness.start(cfg.build());

        await().until(() -> router.backend("a").health() == HealthState.WARMING_UP);
        assertThat(router.chat("m").body()).contains("\"upstream\":\"b\"");
        await().atMost(Duration.ofSeconds(5)).until(() -> router.backend("a").health() == HealthState.DOWN);
        a.healthStatus(200);
        await().atMost(Duration.ofSeconds(5)).until(() -> router.backend("a").health() == HealthState.HEALTHY);
    }

    @Test
    void aFreshBackendIsRoutableBeforeItsFirstProbe() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m").health(Duration.ofSeconds(30), 1, 1);
        a.healthStatus(500); // the first probe will fail, but the request may win the race: unknown is routable
        router = harness.start(cfg.build());
        assertThat(router.backend("a").health()).isIn(HealthState.UNKNOWN, HealthState.DOWN);
        await().until(() -> router.backend("a").health() == HealthState.DOWN);
        assertThat(router.chat("m").statusCode()).isEqualTo(503);
    }

    @Test
    void retriesA503OnAnotherBackend() {
        router = harness.start(twoBackends().build());
        a.enqueue(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"));

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.body()).contains("\"upstream\":\"b\"");
        assertThat(a.completionCount()).isEqualTo(1);
        assertThat(b.completionCount()).isEqualTo(1);
        assertThat(router.scrape()).contains("continuum_retries_total{backend=\"a\",reason=\"status_503\"} 1.0");
    }

    @Test
    void retriesAConnectFailureOnAnotherBackend() {
        router = harness.start(twoBackends().build());
        a.stop();

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.body()).contains("\"upstream\":\"b\"");
        assertThat(router.scrape()).contains("continuum_retries_total{backend=\"a\",reason=\"connect_failure\"} 1.0")
                .contains("continuum_backend_requests_total{backend=\"a\",status_class=\"error\"} 1.0");
    }

    @Test
    void doesNotRetryWhenTheBudgetIsSpent() {
        ConfigBuilder cfg = twoBackends();
        cfg.retry = new RetryConfig(true, 3, 0.0, 0, Duration.ZERO);
        router = harness.start(cfg.build());
        a.enqueue(Reply.status(503, "{\"error\":{\"message\":\"overloaded\"}}"));

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(503);
        assertThat(res.body()).contains("overloaded");
        assertThat(b.completionCount()).isZero();
    }

    @Test
    void givesUpAfterMaxAttemptsWithTheLastError() {
        ConfigBuilder cfg = twoBackends();
        cfg.retry = new RetryConfig(true, 2, 1.0, 10, Duration.ofMillis(10));
        router = harness.start(cfg.build());
        a.stop();
        b.stop();

        HttpResponse<String> res = router.chat("m");

        assertThat(res.statusCode()).isEqualTo(502);
        assertThat(res.body()).contains("\"type\":\"server_error\"");
    }

    @Test
    void answers504WhenTheUpstreamIsTooSlow() throws Exception {
        VirtualTimer timer = new VirtualTimer();
        router = harness.start(ConfigBuilder.create()
                .backend(ConfigBuilder.backendConfig("a", a.baseUrl(), 1, null, Duration.ofMillis(200), true, false, "m"))
                .build(), s -> s.proxyOptions(ProxyOptions.defaults().withTimer(timer)));
        a.enqueue(Reply.delayed(Duration.ofMinutes(10), Reply.echo()));

        CompletableFuture<HttpResponse<String>> pending = CompletableFuture.supplyAsync(() -> router.chat("m"));
        // The backend's own timeout is the attempt's bound; it fires when the (virtual) time passes it.
        await().atMost(Duration.ofSeconds(10)).until(() -> a.completionCount() == 1
                && timer.nextDue().equals(Optional.of(Duration.ofMillis(200))));
        timer.advance(Duration.ofMillis(200));
        HttpResponse<String> res = pending.get(10, TimeUnit.SECONDS);

        assertThat(res.statusCode()).isEqualTo(504);
        assertThat(res.body()).contains("gateway_timeout");
        // The next request gets a fresh connection and works.
        assertThat(router.chat("m").statusCode()).isEqualTo(200);
    }

    @Test
    void answers503WhenNoBackendIsAvailable() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m").noRetry();
        cfg.breaker = new CircuitBreakerConfig(true, 1, 0.5, 100, Duration.ofSeconds(60), Duration.ofSeconds(60), 1, 1);
        router = harness.start(cfg.build());
        a.stop();

        assertThat(router.chat("m").statusCode()).isEqualTo(502);
        HttpResponse<String> res = router.chat("m");
        assertThat(res.statusCode()).isEqualTo(503);
        assertThat(res.body()).contains("no_healthy_backend");
    }
}
