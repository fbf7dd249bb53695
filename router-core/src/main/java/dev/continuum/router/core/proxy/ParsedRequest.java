package dev.continuum.router.core.proxy;

/**
 * What the proxy reads from a body: the model, whether a stream was asked for, and whether the
 * body carries {@code nvext} routing fields that must be stripped before it is forwarded.
 */
record ParsedRequest(String model, boolean stream, boolean untrustedNvext) {
    ParsedRequest(String model, boolean stream) {
        this(model, stream, false);
    }
}
