package dev.continuum.router.core.proxy;

/**
 * What the proxy reads from a body: the model, whether a stream was asked for, whether the body carries
 * {@code nvext} routing fields that must be stripped before it is forwarded, and the prompt's estimated
 * size ({@link PromptTokens}).
 */
record ParsedRequest(String model, boolean stream, boolean untrustedNvext, long estimatedPromptTokens) {
    ParsedRequest(String model, boolean stream) {
        this(model, stream, false, 0);
    }
}
