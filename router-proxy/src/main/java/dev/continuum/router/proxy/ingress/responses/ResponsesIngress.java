package dev.continuum.router.proxy.ingress.responses;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.proxy.metrics.Endpoint;
import dev.continuum.router.proxy.ProxyRoute;
import java.util.List;

/**
 * The Responses routes: {@code /v1/responses} converted to chat completions (pinned like them), or passed through
 * as sent to backends configured {@code responses_api: native} (pinned by model alone), and
 * {@code /v1/responses/compact} forwarded as sent to the backend's same path, never pinned.
 */
public final class ResponsesIngress {
    private ResponsesIngress() {
    }

    public static List<ProxyRoute> routes() {
        return List.of(
                ProxyRoute.convertedUnlessNative("/v1/responses", Endpoint.RESPONSES, new ResponsesConverter(),
                        BackendConfig::servesResponsesNatively),
                ProxyRoute.passthrough("/v1/responses/compact", Endpoint.RESPONSES_COMPACT));
    }
}
