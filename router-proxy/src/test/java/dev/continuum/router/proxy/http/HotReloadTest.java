package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.CircuitBreakerConfig;
import dev.continuum.router.proxy.BackendStatus;
import dev.continuum.router.proxy.CircuitState;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HotReloadTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").upstream("c").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private final TestUpstream c = harness.upstream("c");
    private RouterHarness router;

    private static ConfigBuilder base() {
        ConfigBuilder cfg = ConfigBuilder.create().noRetry();
        cfg.breaker = new CircuitBreakerConfig(true, 1, 0.5, 100, Duration.ofSeconds(60), Duration.ofSeconds(60), 1, 1);
        return cfg;
    }

    @Test
    void movesTrafficToANewBackendAndKeepsTheStateOfAnUnchangedOne() throws Exception {
        router = harness.start(base().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m").build());
        a.enqueue(Reply.status(500, "{}"));
        assertThat(router.chat("m").statusCode()).isEqualTo(500); // a's breaker opens
        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.OPEN);
        // A stream on b that is in flight across the reload.
        b.defaultReply(Reply.controlledStream());
        CompletableFuture<HttpResponse<InputStream>> pending = router.http.sendAsync(
                HttpRequest.newBuilder(router.uri("/v1/chat/completions"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        StreamHandle inFlight = b.awaitStream(Duration.ofSeconds(5));
        HttpResponse<InputStream> streaming = pending.get(5, TimeUnit.SECONDS);
        assertThat(router.scrape()).contains("backend=\"b\"");

        router.server.apply(base().backend("a", a.baseUrl(), "m").backend("c", c.baseUrl(), "m").build());

        assertThat(router.server.proxy().backends()).extracting(BackendStatus::name).containsExactly("a", "c");
        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.OPEN);
        for (int i = 0; i < 4; i++) {
            assertThat(router.chat("m").body()).contains("\"upstream\":\"c\"");
        }
        assertThat(router.scrape()).doesNotContain("backend=\"b\"").contains("backend=\"c\"");

        inFlight.send("still here");
        inFlight.finish();
        try (InputStream in = streaming.body()) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains("still here").contains("[DONE]");
        }
    }

    @Test
    void aChangedUrlIsANewBackendWithFreshState() {
        router = harness.start(base().backend("a", a.baseUrl(), "m").build());
        a.enqueue(Reply.status(500, "{}"));
        router.chat("m");
        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.OPEN);

        router.server.apply(base().backend("a", c.baseUrl(), "m").build());

        assertThat(router.backend("a").circuit()).isEqualTo(CircuitState.CLOSED);
        assertThat(router.chat("m").body()).contains("\"upstream\":\"c\"");
    }
}
