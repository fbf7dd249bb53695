package dev.continuum.router.core.ingress.responses;

import dev.continuum.router.core.metrics.Endpoint;
import dev.continuum.router.core.proxy.ProxyRoute;
import java.util.List;

/**
 * The Responses routes: {@code /v1/responses} converted to chat completions (pinned like them), and
 * {@code /v1/responses/compact} forwarded as sent to the backend's same path, never pinned.
 */
public final class ResponsesIngress {
    private ResponsesIngress() {
    }

    public static List<ProxyRoute> routes() {
        return List.of(
                ProxyRoute.converted("/v1/responses", Endpoint.RESPONSES, new ResponsesConverter()),
                ProxyRoute.passthrough("/v1/responses/compact", Endpoint.RESPONSES_COMPACT));
    }
}
