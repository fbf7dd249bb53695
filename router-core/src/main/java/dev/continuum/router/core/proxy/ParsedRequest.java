package dev.continuum.router.core.proxy;

/**
 * What the proxy reads from a body: the model, whether a stream was asked for, whether the body carries
 * {@code nvext} routing fields that must be stripped before it is forwarded, and the prompt's estimated
 * size ({@link PromptTokens}), and the {@code ConsistentHash} key of its first user message
 * ({@link AffinityKeys}; 0 when not asked for or absent).
 */
record ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens,
                     long firstUserMessageKey) {
    ParsedRequest(String model, boolean stream) {
        this(model, stream, false, 0, 0);
    }

    ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens) {
        this(model, stream, untrustedNvext, estimatedPromptTokens, 0);
    }

    /** The same request for another model (a fallback); the body is rewritten to match. */
    ParsedRequest withModel(String other) {
        return new ParsedRequest(other, stream, untrustedNvext, estimatedPromptTokens, firstUserMessageKey);
    }
}
