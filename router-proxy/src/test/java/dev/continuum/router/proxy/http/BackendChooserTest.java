package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.proxy.BackendChooser;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@link BackendChooser} seam through the real server and real upstreams: a choice made off the loop steers
 * every request of the standard path, sees only the available candidates (a failed backend's retry goes to the
 * next one it chooses), and a chooser that declines, fails or answers nothing leaves the strategy to pick.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BackendChooserTest {
    private static final String BODY = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").upstream("c")
            .build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private final TestUpstream c = harness.upstream("c");
    private final List<List<String>> offered = new CopyOnWriteArrayList<>();
    private RouterHarness router;

    @BeforeAll
    void start() {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m")
                .backend("c", c.baseUrl(), "m").build());
    }

    @BeforeEach
    void reset() {
        offered.clear();
        for (TestUpstream u : List.of(a, b, c)) {
            u.clearRecorded();
            u.defaultReply(Reply.echo());
        }
    }

    /** Chooses {@code name} when available, the strategy otherwise; records what it was offered. */
    private BackendChooser prefer(String name) {
        return (model, body, candidates) -> CompletableFuture.supplyAsync(() -> available -> {
            offered.add(available.stream().map(BackendChooser.Candidate::name).toList());
            for (int i = 0; i < available.size(); i++) {
                if (available.get(i).name().equals(name)) {
                    return i;
                }
            }
            return -1;
        }, CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS));
    }

    @Test
    void aChoiceMadeOffTheLoopSteersEveryRequest() {
        router.server.proxy().backendChooser(prefer("c"));
        for (int i = 0; i < 6; i++) {
            assertThat(router.post("/v1/chat/completions", BODY).statusCode()).isEqualTo(200);
        }
        assertThat(c.completionCount()).isEqualTo(6);
        assertThat(a.completionCount() + b.completionCount()).isZero();
        assertThat(offered.get(0)).containsExactly("a", "b", "c");
    }

    @Test
    void aRetryIsChosenAmongTheUntriedCandidates() {
        router.server.proxy().backendChooser(prefer("b"));
        b.defaultReply(Reply.status(503, "{\"error\":{\"message\":\"busy\"}}"));

        HttpResponse<String> res = router.post("/v1/chat/completions", BODY);

        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(b.completionCount()).isEqualTo(1);
        assertThat(a.completionCount() + c.completionCount()).isEqualTo(1);
        assertThat(offered.get(1)).doesNotContain("b");
    }

    @Test
    void aChooserThatDeclinesOrFailsLeavesTheStrategyToPick() {
        router.server.proxy().backendChooser((model, body, candidates) -> null);
        for (int i = 0; i < 3; i++) {
            assertThat(router.post("/v1/chat/completions", BODY).statusCode()).isEqualTo(200);
        }
        router.server.proxy().backendChooser((model, body, candidates) ->
                CompletableFuture.failedFuture(new IllegalStateException("tokenizer gone")));
        for (int i = 0; i < 3; i++) {
            assertThat(router.post("/v1/chat/completions", BODY).statusCode()).isEqualTo(200);
        }
        router.server.proxy().backendChooser((model, body, candidates) -> CompletableFuture.completedFuture(null));
        for (int i = 0; i < 3; i++) {
            assertThat(router.post("/v1/chat/completions", BODY).statusCode()).isEqualTo(200);
        }
        // Round robin over three backends, nine requests.
        assertThat(List.of(a.completionCount(), b.completionCount(), c.completionCount())).containsExactly(3, 3, 3);
        router.server.proxy().backendChooser(null);
    }
}
