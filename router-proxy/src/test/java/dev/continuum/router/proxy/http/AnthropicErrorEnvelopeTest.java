package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ApiKeysConfig;
import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.RateLimit;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Every error on the Anthropic routes is in Anthropic's envelope ({@code {"type":"error","error":{"type","message"}}}),
 * the ingress's own refusals (413, 405) included, which the HTTP layer answers before the proxy sees the request;
 * the OpenAI routes keep OpenAI's envelope for the same refusals.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AnthropicErrorEnvelopeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MESSAGE = "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"hi\"}]}";
    private final TestUpstream upstream = TestUpstream.start("u");
    private RouterHarness router;

    @BeforeAll
    void start() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("u", upstream.baseUrl(), "m").noRetry();
        cfg.maxBody = ByteSize.ofKiB(1);
        cfg.apiKeys = new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null, List.of(
                ConfigBuilder.key("team", "sk-team"),
                ConfigBuilder.key("slow", "sk-slow", List.of(), List.of(), new RateLimit(0.01, 1), true, null)));
        router = RouterHarness.start(cfg.build(),
                s -> s.proxyOptions(Ingresses.standard(ProxyOptions.defaults(), new EstimatedTokens())));
    }

    @AfterAll
    void stop() {
        router.close();
        upstream.close();
    }

    private static void anthropic(HttpResponse<String> res, int status, String type) throws Exception {
        assertThat(res.statusCode()).isEqualTo(status);
        assertThat(res.headers().firstValue("content-type")).hasValue("application/json");
        JsonNode body = JSON.readTree(res.body());
        assertThat(body.path("type").asText()).as(res.body()).isEqualTo("error");
        assertThat(body.path("error").path("type").asText()).as(res.body()).isEqualTo(type);
        assertThat(body.path("error").path("message").asText()).isNotEmpty();
    }

    @Test
    void theIngressesOwnRefusalsAreInAnthropicsEnvelopeOnTheAnthropicRoutes() throws Exception {
        String big = "{\"model\":\"m\",\"pad\":\"" + "x".repeat(2000) + "\"}";
        for (String path : List.of("/v1/messages", "/anthropic/v1/messages", "/v1/messages/count_tokens")) {
            anthropic(router.post(path, big, "authorization", "Bearer sk-team"), 413, "request_too_large");
            anthropic(router.get(path, "authorization", "Bearer sk-team"), 405, "invalid_request_error");
        }
        String tooLarge = RawHttp.exchange(router.port, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-pad: "
                + "a".repeat(20_000) + "\r\nContent-Length: 0\r\n\r\n", 5000);
        assertThat(tooLarge).startsWith("HTTP/1.1 431 ");
        JsonNode headerError = JSON.readTree(tooLarge.substring(tooLarge.indexOf("\r\n\r\n") + 4));
        assertThat(headerError.path("type").asText()).isEqualTo("error");
        assertThat(headerError.path("error").path("type").asText()).isEqualTo("invalid_request_error");
        HttpResponse<String> chat = router.post("/v1/chat/completions", big, "authorization", "Bearer sk-team");
        assertThat(chat.statusCode()).isEqualTo(413);
        assertThat(JSON.readTree(chat.body()).path("error").path("code").asText()).isEqualTo("request_too_large");
        assertThat(upstream.completionCount()).isZero();
    }

    @Test
    void authenticationRateLimitsAndUpstreamFailuresAreInAnthropicsEnvelope() throws Exception {
        anthropic(router.post("/v1/messages", MESSAGE), 401, "authentication_error");
        anthropic(router.post("/v1/messages", MESSAGE, "authorization", "Bearer sk-nope"), 401,
                "authentication_error");
        upstream.defaultReply(Reply.status(500, "{\"error\":{\"message\":\"boom\"}}"));
        anthropic(router.post("/v1/messages", MESSAGE, "authorization", "Bearer sk-slow"), 500, "api_error");
        anthropic(router.post("/v1/messages", MESSAGE, "authorization", "Bearer sk-slow"), 429, "rate_limit_error");
        upstream.defaultReply(Reply.status(503, "not json"));
        anthropic(router.post("/v1/messages", MESSAGE, "authorization", "Bearer sk-team"), 503, "api_error");
    }
}
