package dev.continuum.router.proxy.metrics;

import io.netty.handler.codec.http.HttpMethod;

/** The {@code method} label: the standard methods, anything else is {@code OTHER}. */
public enum MethodLabel {
    GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, OTHER;

    public static MethodLabel of(HttpMethod method) {
        // HttpMethod.valueOf returns the shared constants for standard names, so identity works.
        if (method == HttpMethod.POST) {
            return POST;
        } else if (method == HttpMethod.GET) {
            return GET;
        } else if (method == HttpMethod.PUT) {
            return PUT;
        } else if (method == HttpMethod.DELETE) {
            return DELETE;
        } else if (method == HttpMethod.PATCH) {
            return PATCH;
        } else if (method == HttpMethod.HEAD) {
            return HEAD;
        } else if (method == HttpMethod.OPTIONS) {
            return OPTIONS;
        }
        return OTHER;
    }
}
