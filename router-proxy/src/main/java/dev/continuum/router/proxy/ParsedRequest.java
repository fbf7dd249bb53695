package dev.continuum.router.proxy;

/**
 * What the proxy reads from a body: the model, whether a stream was asked for, whether the body carries
 * {@code nvext} routing fields that must be stripped before it is forwarded, and the prompt's estimated
 * size ({@link PromptTokens}), and the {@code ConsistentHash} key of its first user message
 * ({@link AffinityKeys}; 0 when not asked for or absent). {@code passthrough}: an ingress's request sent in the
 * client's own wire to backends that serve it natively (not a chat completion; pinned by model alone).
 */
record ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens,
                     long firstUserMessageKey, boolean passthrough) {
    ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens,
                  long firstUserMessageKey) {
        this(model, stream, untrustedNvext, estimatedPromptTokens, firstUserMessageKey, false);
    }

    ParsedRequest(String model, boolean stream) {
        this(model, stream, false, 0, 0);
    }

    ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens) {
        this(model, stream, untrustedNvext, estimatedPromptTokens, 0);
    }

    /** The same request for another model (a fallback); the body is rewritten to match. */
    ParsedRequest withModel(String other) {
        return new ParsedRequest(other, stream, untrustedNvext, estimatedPromptTokens, firstUserMessageKey,
                passthrough);
    }

    /** The same request, sent unconverted to backends that serve its wire natively. */
    ParsedRequest asPassthrough() {
        return new ParsedRequest(model, stream, untrustedNvext, estimatedPromptTokens, firstUserMessageKey, true);
    }
}
