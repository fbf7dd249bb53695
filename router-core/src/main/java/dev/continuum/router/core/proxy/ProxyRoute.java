package dev.continuum.router.core.proxy;

import dev.continuum.router.core.metrics.Endpoint;

/** The routes the proxy answers. */
public enum ProxyRoute {
    CHAT_COMPLETIONS("/v1/chat/completions", Endpoint.CHAT_COMPLETIONS),
    COMPLETIONS("/v1/completions", Endpoint.COMPLETIONS),
    MODELS("/v1/models", Endpoint.MODELS);

    private final String path;
    private final Endpoint endpoint;

    ProxyRoute(String path, Endpoint endpoint) {
        this.path = path;
        this.endpoint = endpoint;
    }

    public String path() {
        return path;
    }

    public Endpoint endpoint() {
        return endpoint;
    }
}
