package dev.continuum.router.proxy.ingress.anthropic;

import dev.continuum.router.proxy.metrics.Endpoint;
import dev.continuum.router.proxy.ProxyRoute;
import java.util.List;

/**
 * The Anthropic Messages routes: {@code /v1/messages} and {@code /anthropic/v1/messages} (converted, pinned like
 * chat completions), and their {@code count_tokens} (answered by the router).
 */
public final class AnthropicIngress {
    private AnthropicIngress() {
    }

    /** The routes with token counting by {@code counter}. */
    public static List<ProxyRoute> routes(TokenCounter counter) {
        AnthropicConverter converter = new AnthropicConverter();
        CountTokens count = new CountTokens(counter);
        return List.of(
                ProxyRoute.converted("/v1/messages", Endpoint.MESSAGES, converter),
                ProxyRoute.converted("/anthropic/v1/messages", Endpoint.ANTHROPIC_MESSAGES, converter),
                ProxyRoute.local("/v1/messages/count_tokens", Endpoint.COUNT_TOKENS, count, converter),
                ProxyRoute.local("/anthropic/v1/messages/count_tokens", Endpoint.ANTHROPIC_COUNT_TOKENS, count,
                        converter));
    }
}
