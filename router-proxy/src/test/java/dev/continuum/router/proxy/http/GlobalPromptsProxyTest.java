package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.core.config.GlobalPromptsConfig.MergeStrategy;
import dev.continuum.router.core.config.GlobalPromptsConfig.PromptSource;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code global_prompts} and {@code requires_single_leading_system} on the chat path, through the real server and
 * real upstreams: each backend receives its own rewrite, other routes are untouched, a reload applies to the next
 * request, and the dispatch hook sees the rewrites (and the tenant) while a plan's own body is sent as it made it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GlobalPromptsProxyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
            + "{\"role\":\"system\",\"content\":\"own\"}]}";
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    private static GlobalPromptsConfig prompts(String defaultText, MergeStrategy strategy) {
        return new GlobalPromptsConfig(defaultText, null, null, Map.of("b", new PromptSource("for b", null, "for b")),
                Map.of(), strategy, " | ", defaultText);
    }

    private ConfigBuilder config(GlobalPromptsConfig g) {
        return ConfigBuilder.create().backend("a", a.baseUrl(), "m")
                .backend(new BackendConfig("b", BackendType.OPENAI, b.baseUrl(), List.of("m"), BackendRole.UNIFIED, 1,
                        null, null, true, false, null, true))
                .globalPrompts(g);
    }

    private static JsonNode messages(RecordedRequest r) throws Exception {
        return JSON.readTree(r.body()).get("messages");
    }

    @Test
    void eachBackendReceivesItsOwnRewrite() throws Exception {
        router = harness.start(config(prompts("be brief", MergeStrategy.PREPEND)).build());

        assertThat(router.post("/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        assertThat(router.post("/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);

        // a: the default prompt prepended to the first system message, where it stands.
        assertThat(messages(a.completionRequests().get(0)).toString()).isEqualTo(
                "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"be brief | own\"}]");
        // b: its own prompt, then its one leading system message.
        assertThat(messages(b.completionRequests().get(0)).toString()).isEqualTo(
                "[{\"role\":\"system\",\"content\":\"for b | own\"},{\"role\":\"user\",\"content\":\"hi\"}]");
        assertThat(a.completionRequests().get(0).header("content-length"))
                .isEqualTo(Integer.toString(a.completionRequests().get(0).body().getBytes(StandardCharsets.UTF_8).length));
    }

    @Test
    void aCompletionsBodyIsNeverRewritten() {
        router = harness.start(config(prompts("be brief", MergeStrategy.REPLACE)).build());
        String body = "{\"model\":\"m\",\"prompt\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

        assertThat(router.post("/v1/completions", body).statusCode()).isEqualTo(200);

        RecordedRequest seen = a.completionCount() == 1 ? a.completionRequests().get(0) : b.completionRequests().get(0);
        assertThat(seen.body()).isEqualTo(body);
    }

    @Test
    void aReloadAppliesToTheNextRequest() throws Exception {
        router = harness.start(config(prompts("first", MergeStrategy.PREPEND)).build());
        router.post("/v1/chat/completions", CHAT);
        router.post("/v1/chat/completions", CHAT);

        router.server.apply(config(prompts("second", MergeStrategy.APPEND)).build());
        a.clearRecorded();
        router.post("/v1/chat/completions", CHAT);
        router.post("/v1/chat/completions", CHAT);

        assertThat(messages(a.completionRequests().get(0)).get(1).get("content").textValue()).isEqualTo("own | second");
    }

    @Test
    void theHookSeesTheRewritesAndTheTenantAndAPinnedBodyIsSentAsItWasMade() throws Exception {
        router = harness.start(config(prompts("be brief", MergeStrategy.PREPEND)).disaggregated(true).build());
        List<DispatchRequest> seen = new CopyOnWriteArrayList<>();
        byte[] pinned = "{\"model\":\"m\",\"messages\":[],\"nvext\":{\"token_data\":[1]}}".getBytes(StandardCharsets.UTF_8);
        router.server.proxy().dispatchHook(req -> {
            seen.add(req);
            return new DispatchPlan(List.of("b"), Map.of(), Map.of(), "pinned", "refused", "refused", o -> { })
                    .withPinnedBody(pinned);
        });
        b.defaultReply(Reply.echo());

        router.post("/v1/chat/completions", CHAT, "x-tenant-id", "tenant-7");

        DispatchRequest req = seen.get(0);
        assertThat(req.tenantId()).isEqualTo("tenant-7");
        assertThat(req.rewrites().forBackend("a")).isEqualTo(new ChatRewrite("be brief", MergeStrategy.PREPEND, " | ", false));
        assertThat(req.rewrites().forBackend("b")).isEqualTo(new ChatRewrite("for b", MergeStrategy.PREPEND, " | ", true));
        assertThat(req.rewrites().forBackend("unknown")).isSameAs(ChatRewrite.NONE);
        assertThat(b.completionRequests().get(0).body()).isEqualTo(new String(pinned, StandardCharsets.UTF_8));
    }
}
