package dev.continuum.router.core.proxy;

/** The only two body fields the proxy reads: the model and whether a stream was asked for. */
record ParsedRequest(String model, boolean stream) {
}
