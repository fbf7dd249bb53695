package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * count_tokens with a counter that answers later on another thread, as a tokenizer-backed one does: the router
 * writes that count when it arrives; a counter that fails is answered with the estimate; nothing is dispatched.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncCountTokensTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("upstream").build();
    private final TestUpstream upstream = harness.upstream("upstream");
    private final List<String> threads = new CopyOnWriteArrayList<>();
    private RouterHarness router;

    @BeforeAll
    void start() {
        router = harness.start(ConfigBuilder.create().backend("upstream", upstream.baseUrl(), "m").build(),
                s -> s.proxyOptions(Ingresses.standard(ProxyOptions.defaults(), chat -> {
                    if (chat.path("messages").size() > 1) {
                        return CompletableFuture.failedFuture(new IllegalStateException("tokenizer failed"));
                    }
                    return CompletableFuture.supplyAsync(() -> {
                        threads.add(Thread.currentThread().getName());
                        return 1234L;
                    }, CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS));
                })));
    }

    @Test
    void aCountThatArrivesLaterIsTheAnswer() throws Exception {
        HttpResponse<String> r = router.post("/v1/messages/count_tokens",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree("{\"input_tokens\":1234}"));
        assertThat(threads).hasSize(1); // the counter answered, later and on its own thread
        assertThat(upstream.requests()).isEmpty();
    }

    @Test
    void aFailingCounterIsAnsweredWithTheEstimate() throws Exception {
        HttpResponse<String> r = router.post("/anthropic/v1/messages/count_tokens", "{\"model\":\"m\",\"messages\":["
                + "{\"role\":\"user\",\"content\":\"one two three\"},{\"role\":\"assistant\",\"content\":\"four\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        // max(ceil(13 / 4), 3) = 4 and max(1, 1) = 1
        assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree("{\"input_tokens\":5}"));
        assertThat(upstream.requests()).isEmpty();
    }
}
