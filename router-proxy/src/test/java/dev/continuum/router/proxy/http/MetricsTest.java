package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    @Test
    void exposesEveryFamilyWithClosedLabels() {
        router = harness.start(ConfigBuilder.create()
                        .backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m").build(),
                s -> s.routeExact("/health", r -> CompletableFuture.completedFuture(LocalResponse.text(200, "ok"))));
        a.enqueue(Reply.status(503, "{}"));

        router.chat("m");
        router.chat("m");
        router.get("/health");
        router.get("/v1/unknown");
        router.get("/v1/models");

        // A request is recorded just after its last write is issued: the client may see it first.
        org.awaitility.Awaitility.await().untilAsserted(() -> assertThat(router.scrape())
                .contains("http_requests_total{endpoint=\"/v1/chat/completions\",method=\"POST\",status=\"200\"} 2.0")
                .contains("http_requests_total{endpoint=\"/health\",method=\"GET\",status=\"200\"} 1.0")
                .contains("http_requests_total{endpoint=\"other\",method=\"GET\",status=\"404\"} 1.0")
                .contains("http_requests_total{endpoint=\"/v1/models\",method=\"GET\",status=\"200\"} 1.0")
                .contains("http_request_duration_seconds_bucket{endpoint=\"/v1/chat/completions\",method=\"POST\",le=\"0.005\"}")
                .contains("http_request_duration_seconds_count{endpoint=\"/v1/chat/completions\",method=\"POST\"} 2")
                .contains("continuum_backend_requests_total{backend=\"a\",status_class=\"5xx\"} 1.0")
                .contains("continuum_backend_requests_total{backend=\"a\",status_class=\"2xx\"} 1.0")
                .contains("continuum_backend_requests_total{backend=\"b\",status_class=\"2xx\"} 1.0")
                .contains("continuum_backend_request_duration_seconds_count{backend=\"a\"} 2")
                .contains("continuum_backend_healthy{backend=\"a\"} 1.0")
                .contains("continuum_backend_circuit_state{backend=\"a\"} 0.0")
                .contains("continuum_retries_total{backend=\"a\",reason=\"status_503\"} 1.0")
                .contains("continuum_rate_limited_total{tier=\"global\"} 0.0")
                .contains("continuum_stream_aborts_total{reason=\"client_closed\",side=\"client\"} 0.0")
                .contains("continuum_stream_aborts_total{reason=\"chunk_interval\",side=\"upstream\"} 0.0"));
    }
}
