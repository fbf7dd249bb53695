package dev.continuum.router.proxy.metrics;

/**
 * The {@code endpoint} label: a route template from this closed set, never the client's path.
 * Local routes map to the template they were registered under when it is one of these, else
 * {@link #OTHER}.
 */
public enum Endpoint {
    CHAT_COMPLETIONS("/v1/chat/completions"),
    COMPLETIONS("/v1/completions"),
    MODELS("/v1/models"),
    EMBEDDINGS("/v1/embeddings"),
    RERANK("/v1/rerank"),
    MESSAGES("/v1/messages"),
    ANTHROPIC_MESSAGES("/anthropic/v1/messages"),
    COUNT_TOKENS("/v1/messages/count_tokens"),
    ANTHROPIC_COUNT_TOKENS("/anthropic/v1/messages/count_tokens"),
    RESPONSES("/v1/responses"),
    RESPONSES_COMPACT("/v1/responses/compact"),
    HEALTH("/health"),
    HEALTHZ("/healthz"),
    METRICS("/metrics"),
    ADMIN("/admin"),
    OTHER("other");

    private final String label;

    Endpoint(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /**
     * The label of a local route registered at {@code pathOrPrefix}; {@code metricsPath} is the
     * configured metrics endpoint (it may differ from {@code /metrics}).
     */
    public static Endpoint forLocalRoute(String pathOrPrefix, String metricsPath) {
        if (pathOrPrefix.equals(metricsPath) || pathOrPrefix.equals("/metrics")) {
            return METRICS;
        }
        if (pathOrPrefix.equals("/admin") || pathOrPrefix.startsWith("/admin/")) {
            return ADMIN;
        }
        for (Endpoint e : values()) {
            if (e != OTHER && e.label.equals(pathOrPrefix)) {
                return e;
            }
        }
        return OTHER;
    }
}
